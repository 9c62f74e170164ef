"""The Verification block in a pull request's description, and its short form in the status."""

from __future__ import annotations

from datetime import UTC, datetime

from resolver.callbacks import status
from resolver.callbacks.proof import render_files, render_verification, render_verified_short
from resolver.contract.outbound import CUT_MARK, MAX_BODY, fit_body
from resolver.contract.verification import Check, Verification

PASSED = Check("python -m pytest -q", "test", 0, 3, passes=3)
FAILED_LAST = Check("ruff check .", "lint", 1, 2, passes=1)
PIPED = Check("pytest 2>&1 | tail -n 3", "test", 0, 1, passes=1, masked=True)


def test_the_block_lists_each_command_with_its_exit_code() -> None:
    block = render_verification(Verification((PASSED, FAILED_LAST, PIPED)))
    assert block.startswith("### Verification")
    assert "- ✅ `python -m pytest -q` · test · exit 0 (3 runs)" in block
    assert (
        "- ❌ `ruff check .` · lint · exit 1 on the last of 2 runs; an earlier run passed" in block
    )
    assert "- ❔ `pytest 2>&1 | tail -n 3` · test · exit 0, but that is the pipeline's" in block


def test_no_tests_ran_is_said() -> None:
    block = render_verification(Verification((), ("test", "lint")))
    assert "- ⚠️ **No tests or lint ran.**" in block
    short = render_verified_short(Verification((), ("test", "lint")))
    assert short == "Not verified: no tests or lint ran."


def test_the_short_form() -> None:
    short = render_verified_short(Verification((PASSED,), ("lint",)))
    assert short == "Verified: `python -m pytest -q` passed (3 runs); no lint ran."
    mixed = render_verified_short(Verification((PASSED, FAILED_LAST, PIPED)))
    assert mixed == (
        "Checked: `python -m pytest -q` passed (3 runs); `ruff check .` failed (2 runs); "
        "`pytest 2>&1 | tail -n 3` ran (exit code unknown) (1 run)."
    )


def test_a_command_cannot_break_out_of_its_code_span() -> None:
    sneaky = Check("pytest `@everyone`\n<img src=x>", "test", 0, 1, passes=1)
    block = render_verification(Verification((sneaky,)))
    assert "`pytest '@everyone' <img src=x>`" in block


def test_the_files_of_the_branch() -> None:
    files = [("calc.py", 1, 1), ("logo.png", None, None)]
    text = render_files(files, 2)
    assert "2 files changed (+1 -1):" in text
    assert "- `calc.py` (+1 -1)" in text and "- `logo.png` (binary)" in text
    assert "and 3 more" in render_files(files, 5)


def view(**fields: object) -> status.JobView:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    base: dict[str, object] = {
        "id": 9,
        "state": "succeeded",
        "outcome": "changed_code",
        "repo": "octo/widgets",
        "steps": 4,
        "cost_usd": 0.1,
        "started_at": now,
        "finished_at": now,
        "now": now,
        "job_url": "http://resolver.test/jobs/9",
        "summary": "Fixed add().",
        "pr_url": "https://github.test/octo/widgets/pull/1",
    }
    return status.JobView(**{**base, **fields})  # type: ignore[arg-type]


def test_the_pull_request_body_has_the_files_and_the_block() -> None:
    body = status.pull_body(
        view(verification=Verification((PASSED,), ("lint",)), files=(("calc.py", 1, 1),)),
        "title",
        7,
    )
    assert body.index("Fixed add().") < body.index("Fixes #7") < body.index("### Changes")
    assert body.index("### Changes") < body.index("### Verification") < body.index("Opened by")
    assert "**No lint ran.**" in body
    updated = status.pull_body(view(updated_pull=True, verification=Verification()), "t", None)
    assert "Updated by Resolver for [job 9]" in updated


def test_the_final_status_carries_the_short_form() -> None:
    text = status.render(view(verification=Verification((PASSED,), ("lint",))))
    assert "Verified: `python -m pytest -q` passed (3 runs); no lint ran." in text
    answered = view(outcome="answered", verification=Verification((), ("test", "lint")))
    assert "Verified" not in status.render(answered)
    running = view(state="running", verification=Verification((PASSED,)))
    assert "Verified" not in status.render(running)


def test_a_description_fits_what_a_forge_takes_and_keeps_the_jobs_line() -> None:
    """Fifty files with paths of 4,000 characters, and many notes: GitHub would refuse the
    whole pull request."""
    files = tuple((f"{'d' * 3_990}/f{n}.py", 1, 1) for n in range(50))
    notes = tuple("A note of the host's. " * 200 for _ in range(30))
    body = status.pull_body(view(files=files, files_total=50, notes=notes), "title", 7)
    assert len(body) <= MAX_BODY
    assert "(cut: the rest was too long to post)" in body
    assert body.rstrip().endswith("· $0.10")
    listed = status.pull_body(view(files=files[:3], files_total=3), "title", 7)
    assert f"`{'d' * 99}…{'d' * 93}/f0.py`" in listed  # a long path keeps both ends


def test_a_body_cut_inside_code_closes_its_fence() -> None:
    text = "before\n```\n" + "x\n" * 1_000
    cut = fit_body(text, 500)
    assert len(cut) <= 500 and cut.endswith("```" + CUT_MARK)
    assert fit_body("short") == "short"
