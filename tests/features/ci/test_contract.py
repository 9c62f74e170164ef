"""The ci opt-in, the loop's bounds and the failing check as context. Pure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from resolver.contract.provider import CIReport
from resolver.contract.triggers import (
    CiFailure,
    FailedCheck,
    Repository,
    dump_trigger,
    failed_check_in,
    read_trigger,
)
from resolver.features.ci.contract import (
    LOG_TAIL_CHARS,
    CIConfig,
    CIConfigError,
    HeadCommit,
    ci_status_line,
    over_attempts_note,
    parse_ci_config,
    report_comments,
    tail,
    why_not_fix,
)
from resolver.worker.branches import BRANCH_PREFIX

BOT = "resolver@users.noreply"
CHECK = FailedCheck(name="test", head_sha="a" * 40, branch="resolver/7-x", conclusion="failure")


def test_ci_is_off_unless_the_repository_opts_in() -> None:
    assert parse_ci_config({}) == CIConfig(fix=False, max_attempts=2)
    assert parse_ci_config({"ci": {"fix": True}}) == CIConfig(fix=True, max_attempts=2)
    assert parse_ci_config({"ci": {"fix": True, "max_attempts": 3}}).max_attempts == 3


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("yes", "`ci` must be a mapping"),
        ({"fix": "yes"}, "`ci.fix` must be true or false"),
        ({"fix": True, "max_attempts": 0}, "from 1 to 5"),
        ({"fix": True, "max_attempts": 6}, "from 1 to 5"),
        ({"fix": True, "max_attempts": True}, "from 1 to 5"),
        ({"fix": True, "max_attempts": "2"}, "from 1 to 5"),
        ({"fix": True, "retries": 2}, "unknown keys: retries"),
    ],
)
def test_a_bad_ci_setting_is_a_clear_error(value: object, says: str) -> None:
    with pytest.raises(CIConfigError, match=says):
        parse_ci_config({"ci": value})


def test_a_fix_runs_only_on_the_bots_own_failing_head() -> None:
    on = CIConfig(fix=True)
    mine = HeadCommit("a" * 40, BOT, BOT)
    assert why_not_fix(on, CHECK, mine, BOT) is None
    off = why_not_fix(CIConfig(fix=False), CHECK, mine, BOT)
    assert off is not None and off[1] is False  # quiet
    stale = why_not_fix(on, CHECK, HeadCommit("b" * 40, BOT, BOT), BOT)
    assert stale is not None and "stale" in stale[0] and stale[1] is False


@pytest.mark.parametrize(
    ("author", "committer"), [("dave@example.com", BOT), (BOT, "dave@example.com")]
)
def test_a_persons_commit_on_the_branch_stops_the_loop_and_says_so(
    author: str, committer: str
) -> None:
    found = why_not_fix(CIConfig(fix=True), CHECK, HeadCommit("a" * 40, author, committer), BOT)
    assert found is not None and found[1] is True
    assert "Someone else pushed" in found[0] and "`test`" in found[0]


def test_the_log_keeps_its_tail_within_the_budget() -> None:
    text = "".join(f"line {n}\n" for n in range(10_000)) + "the error\n"
    kept, cut = tail(text)
    assert cut and kept.endswith("the error\n") and len(kept) <= LOG_TAIL_CHARS
    assert kept.startswith("line ")  # from a line start
    assert tail("short") == ("short", False)


def test_the_report_becomes_fenced_context_comments() -> None:
    check = FailedCheck(**{**vars(CHECK), "summary": "1 failed"})
    report = CIReport(annotations=("a.py:1: failure: boom",), log_tail="E boom", log_cut=True)
    comments = report_comments(check, report)
    assert [c.author for c in comments] == [
        "CI check test (summary)",
        "CI check test (annotations)",
        "CI check test (end of its log)",
    ]
    assert comments[2].body.startswith("[... the start of the log is cut ...]")


def test_the_failing_check_round_trips_through_the_trigger() -> None:
    trigger = CiFailure(repo=Repository(full_name="o/r"), number=1, check=CHECK)
    assert failed_check_in(read_trigger(dump_trigger(trigger))) == CHECK
    assert failed_check_in(read_trigger({})) is None


def test_the_bot_branch_prefix_is_the_workers() -> None:
    assert BRANCH_PREFIX == "resolver/"


def test_the_status_names_the_check_and_the_attempt_it_is_on() -> None:
    assert ci_status_line(CHECK, 1, 2) == (
        "Fixing the failing check `test` (failure) (attempt 1 of 2 on this commit)."
    )
    assert ci_status_line(CHECK, None, None) == "Fixing the failing check `test` (failure)."


def test_a_check_named_by_the_repository_stays_in_its_code_span() -> None:
    """A workflow's `name:` is the repository's: a tick in it cannot end the span."""
    named = replace(CHECK, name="x` @org/team ![p](https://evil.example/p.png) `\ny" + "z" * 300)
    line = ci_status_line(named, None, None)
    assert line.startswith(
        "Fixing the failing check `x' @org/team ![p](https://evil.example/p.png) ' y"
    )
    assert line.count("`") == 2 and "\n" not in line and len(line) < 260


def test_a_commit_past_its_bound_is_named_with_the_bound() -> None:
    assert over_attempts_note(CHECK, 2) == (
        "the check `test` failed on aaaaaaaaaaaa after 2 fix attempt(s) on that commit; "
        "not trying again"
    )
