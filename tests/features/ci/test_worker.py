"""Whether a red check on the bot's pull request gets a fix job, decided against a real git
origin without a stack: the opt-in read from the default branch only, a stale or someone
else's head, the attempt bound per commit, and the check's output as the agent's context."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from integrations import registry
from resolver.contract import outbound as providers
from resolver.contract.errors import TransientCallbackError
from resolver.contract.provider import CIReport
from resolver.contract.triggers import FailedCheck, read_trigger
from resolver.core.settings import get_settings
from resolver.core.states import Outcome
from resolver.features.ci.worker import QuietStop, check_fix
from resolver.worker.values import Plan, Snapshot, Stop
from tests.agent.conftest import git, make_repo
from tests.conftest import ResolverEnv
from tests.integrations.sixth.provider import NAME, PROVIDER

BRANCH = "resolver/fix-build"
HUMAN = ("-c", "user.name=Ada", "-c", "user.email=ada@example.com")
OPT_IN = "ci:\n  fix: true\n  max_attempts: 2\n"


def bot() -> tuple[str, ...]:
    name = get_settings().bot_name
    return ("-c", f"user.name={name}", "-c", f"user.email={name}@users.noreply")


def commit(repo: Path, branch: str, files: dict[str, str], who: tuple[str, ...]) -> str:
    git(repo, "checkout", "-q", branch)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, *who, "commit", "-qm", f"change {', '.join(files)}")
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    return head


def origin(tmp_path: Path, config: str | None, branch_config: str | None = None) -> Path:
    """`main` with `.resolver/config.yml` holding `config`, and the bot's branch from it
    (with `branch_config` in its own copy of the file, when given)."""
    files = {"app.py": "print('hi')\n"}
    if config is not None:
        files[".resolver/config.yml"] = config
    repo = make_repo(tmp_path / "origin", files)
    git(repo, "branch", BRANCH)
    change = {"app.py": "print('hi!')\n"}
    if branch_config is not None:
        change[".resolver/config.yml"] = branch_config
    commit(repo, BRANCH, change, bot())
    return repo


def plan_for(repo: Path) -> Plan:
    info = providers.RepoInfo("octo/widgets", str(repo), "main")
    return Plan(NAME, info, "main", BRANCH, BRANCH, True)


def check_on(repo: Path, **values: Any) -> FailedCheck:
    head = git(repo, "rev-parse", BRANCH).strip()
    return FailedCheck(
        **{"name": "tests", "head_sha": head, "branch": BRANCH, "conclusion": "failure", **values}
    )


SNAPSHOT = Snapshot(
    1, NAME, "fix the build", "octo/widgets", "ada", None, read_trigger({}), BRANCH, None
)


@pytest.fixture
def reports(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Sixth installed as a forge whose CI reports are read from this list: a CIReport, or an
    error to raise."""
    answers: list[Any] = []

    def read(trigger: Any, requester_id: int | None, check: FailedCheck, settings: Any) -> CIReport:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(
        registry, "INSTALLED", (*registry.INSTALLED, replace(PROVIDER, ci_report=read))
    )
    return answers


def test_a_red_check_on_the_bots_head_is_fixed_with_its_output_as_context(
    reports: list[Any], tmp_path: Path
) -> None:
    repo = origin(tmp_path, OPT_IN)
    reports.append(
        CIReport(annotations=("app.py:1: error: bad print",), log_tail="FAILED test_app")
    )
    check = check_on(repo, title="1 test failed", summary="test_app failed")
    attempt, bound, comments = check_fix(get_settings(), SNAPSHOT, plan_for(repo), check, {})
    assert (attempt, bound) == (1, 2)
    assert [c.author for c in comments] == [
        "CI check tests (summary)",
        "CI check tests (annotations)",
        "CI check tests (end of its log)",
    ]
    assert comments[0].body == "1 test failed\n\ntest_app failed"
    assert comments[1].body == "app.py:1: error: bad print"


def test_each_commit_gets_at_most_its_bound_of_attempts_then_silence(
    reports: list[Any], tmp_path: Path
) -> None:
    repo = origin(tmp_path, OPT_IN)
    check = check_on(repo)
    reports.extend([CIReport(), CIReport()])
    assert [
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), check, {})[0] for _ in range(2)
    ] == [1, 2]
    with pytest.raises(QuietStop) as quiet:
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), check, {})
    assert str(quiet.value) == (
        f"the check `tests` failed on {check.head_sha[:12]} after 2 fix attempt(s) on that "
        "commit; not trying again"
    )


def test_the_opt_in_is_read_from_the_default_branch_never_from_the_pull_request(
    reports: list[Any], tmp_path: Path
) -> None:
    repo = origin(tmp_path, None, branch_config=OPT_IN)
    with pytest.raises(QuietStop, match=r"CI fixing is off for this repository"):
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), check_on(repo), {})
    assert reports == []


def test_a_check_on_a_commit_the_branch_has_moved_on_from_is_left_quietly(
    reports: list[Any], tmp_path: Path
) -> None:
    repo = origin(tmp_path, OPT_IN)
    stale = check_on(repo, head_sha="0" * 40)
    with pytest.raises(QuietStop, match=r"the branch moved on from 000000000000"):
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), stale, {})


def test_someone_elses_push_is_refused_once_and_then_left_quietly(
    reports: list[Any], tmp_path: Path
) -> None:
    repo = origin(tmp_path, OPT_IN.replace("2", "1"))
    commit(repo, BRANCH, {"app.py": "print('mine')\n"}, HUMAN)
    check = check_on(repo)
    with pytest.raises(Stop) as refused:
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), check, {})
    assert refused.value.outcome == Outcome.REFUSED
    assert str(refused.value).startswith(f"Someone else pushed to `{BRANCH}`")
    with pytest.raises(QuietStop):
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), check, {})


def test_a_broken_ci_setting_stops_saying_what_is_wrong(reports: list[Any], tmp_path: Path) -> None:
    repo = origin(tmp_path, "ci:\n  fix: yes please\n")
    with pytest.raises(Stop) as stopped:
        check_fix(get_settings(), SNAPSHOT, plan_for(repo), check_on(repo), {})
    assert stopped.value.outcome == Outcome.COULD_NOT
    assert str(stopped.value) == "I cannot fix the failing check: `ci.fix` must be true or false"


def test_a_report_the_forge_cannot_give_is_named_and_the_fix_still_runs(
    reports: list[Any], tmp_path: Path
) -> None:
    repo = origin(tmp_path, OPT_IN)
    reports.append(TransientCallbackError("HTTP 502", status=502))
    _, _, comments = check_fix(get_settings(), SNAPSHOT, plan_for(repo), check_on(repo), {})
    assert [(c.author, c.body) for c in comments] == [
        ("CI check tests (not available)", "the check's details could not be read: HTTP 502")
    ]
