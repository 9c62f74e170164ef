"""A scheduled run's decisions before any sandbox starts, against a real git origin and an
in-memory forge installed as a provider: a removed schedule, a pull request someone else took
over (left alone, said once), a declined proposal (not made again while nothing changed), a
fix-default-branch run with no test command, a forge that cannot be reached; and what the
run's push commits and remembers."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from integrations import registry
from integrations.standin.git_http import create_bare_repo, run_git
from resolver.agent import git as git_repo
from resolver.agent.session import Work
from resolver.agent.task import AgentResult
from resolver.contract import outbound as providers
from resolver.contract.errors import TransientCallbackError
from resolver.core.job import JobContext, RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.schedules import look, runner
from resolver.schedules.decide import DECLINED, OPEN, Action, Decision, Remembered
from resolver.schedules.prompts import Inputs
from resolver.schedules.pulls import render_edited_note
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Notice, Schedule, ScheduleRun, utcnow
from resolver.worker.values import Plan
from tests.conftest import ResolverEnv
from tests.integrations.sixth.provider import NAME, PROVIDER
from tests.schedules.helpers import get_schedule, make_schedule

REPO = "octo/widgets"
BRANCH = "resolver/schedule-tidy"
FILES = {"calc.py": "x = 1\n", "pyproject.toml": "[project]\nname = 'w'\n"}
BOT = ("-c", "user.name=resolver", "-c", "user.email=resolver@users.noreply")
HUMAN = ("-c", "user.name=Dana", "-c", "user.email=dana@example.test")
PULL_URL = f"https://forge.test/{REPO}/pull/4"


@dataclass
class Forge:
    """What a scheduled run asks of its forge, in memory; `down` makes every call fail."""

    clone_url: str
    open_pulls: dict[str, providers.PullInfo] = field(default_factory=dict)
    down: bool = False

    def repository(self, full_name: str) -> providers.RepoInfo:
        if self.down:
            raise TransientCallbackError("HTTP 503", status=503)
        return providers.RepoInfo(full_name, self.clone_url, "main")

    def git_env(self, clone_url: str) -> dict[str, str]:
        return {}

    def find_open_pull(self, repo: str, branch: str) -> providers.PullInfo | None:
        return self.open_pulls.get(branch)


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, Path]:
    """A bare repository, and a working clone with the bot's branch pushed."""
    bare = create_bare_repo(tmp_path / "git", REPO, FILES)
    work = tmp_path / "work"
    run_git("clone", "-q", str(bare), str(work))
    run_git("checkout", "-q", "-b", BRANCH, cwd=work)
    commit(work, BOT, "calc.py", "x = 2\n")
    run_git("push", "-q", "origin", BRANCH, cwd=work)
    return bare, work


@pytest.fixture
def forge(
    resolver_env: ResolverEnv, origin: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Forge:
    """The in-memory forge, installed as a forge provider named `sixth`."""
    installed = Forge(str(origin[0]))
    provider = replace(PROVIDER, forge=lambda context, requester_id, settings: installed)  # type: ignore[arg-type,return-value]
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, provider))
    return installed


def commit(work: Path, who: tuple[str, ...], name: str, text: str) -> str:
    (work / name).write_text(text)
    run_git("add", "-A", cwd=work)
    run_git(*who, "commit", "-q", "-m", f"edit {name}", cwd=work)
    return run_git("rev-parse", "HEAD", cwd=work).strip()


def schedule(**values: Any) -> int:
    return make_schedule("tidy", f"{NAME}:{REPO}", **values)


def remember(schedule_id: int, remembered: Remembered) -> None:
    """What the schedule remembers of its pull request, as an earlier run left it."""
    with session_scope() as session:
        row = session.get(Schedule, schedule_id)
        assert row is not None
        row.pull_state, row.pull_branch = remembered.state, remembered.branch
        row.pull_head, row.pull_inputs = remembered.head, remembered.inputs


def scheduled_job(schedule_id: int, **values: Any) -> int:
    with session_scope() as session:
        new = jobs.NewJob(source="schedule", task="Tidy up", trigger={"schedule_id": schedule_id})
        job = jobs.create_job(session, new)
        for key, value in values.items():
            setattr(job, key, value)
        return job.id


def run(job_id: int) -> RunResult:
    with session_scope() as session:
        return runner.run_scheduled(session, JobContext(job_id, get_settings()))


def inputs_now(bare: Path, tmp_path: Path, schedule_id: int) -> str:
    """The digest a run computes of the schedule's inputs on the default branch now."""
    row = get_schedule(schedule_id)
    clone = git_repo.clone(str(bare), tmp_path / "digest")
    found = look.manifests(clone, git_repo.default_ref(clone))
    values = (row.task, row.prompt, row.test_command, row.max_iterations, row.max_cost_usd)
    return Inputs(*values, found.digest).digest()


def test_a_run_whose_schedule_was_removed_fails_saying_so(resolver_env: ResolverEnv) -> None:
    result = run(scheduled_job(987654))
    assert (result.state, result.outcome) == (JobState.FAILED, Outcome.ERROR)
    assert result.error == "its schedule was removed"


def test_a_pull_request_someone_else_pushed_to_is_left_alone_and_said_once(
    forge: Forge, origin: tuple[Path, Path]
) -> None:
    work = origin[1]
    head = commit(work, HUMAN, "calc.py", "x = 3\n")
    run_git("push", "-q", "origin", BRANCH, cwd=work)
    forge.open_pulls[BRANCH] = providers.PullInfo(4, PULL_URL, BRANCH, "main")
    schedule_id = schedule()
    remember(schedule_id, Remembered(OPEN, BRANCH, head, "old"))

    first, second = run(scheduled_job(schedule_id)), run(scheduled_job(schedule_id))
    for result in (first, second):
        assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.NO_CHANGES)
        assert result.result["schedule"]["action"] == Action.SKIP_EDITED
        assert result.result["summary"].startswith("Someone else has pushed")
    with session_scope() as session:
        notes = list(session.scalars(select(Notice).where(Notice.kind == "schedule_edited")))
        assert [n.body for n in notes] == [render_edited_note("tidy", BRANCH)]
    assert get_schedule(schedule_id).pull_state == OPEN


def test_a_declined_proposal_is_not_made_again_while_its_inputs_are_unchanged(
    forge: Forge, origin: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, _ = origin
    head = run_git("rev-parse", BRANCH, cwd=origin[1]).strip()
    schedule_id = schedule()
    inputs = inputs_now(bare, tmp_path, schedule_id)
    remember(schedule_id, Remembered(OPEN, BRANCH, head, inputs))
    # An earlier run of the schedule opened a pull request from the branch; it is closed now.
    earlier = scheduled_job(schedule_id, branch=BRANCH, pr_url=PULL_URL)
    with session_scope() as session:
        done = ScheduleRun(schedule_id=schedule_id, job_id=earlier, due_at=utcnow(), reason="cron")
        session.add(done)

    result = run(scheduled_job(schedule_id))
    assert result.outcome == Outcome.NO_CHANGES
    assert result.result["schedule"] == {"action": Action.SKIP_DECLINED, "inputs": inputs}
    assert "closed without merging" in result.result["summary"]
    assert get_schedule(schedule_id).pull_state == DECLINED


def test_fix_default_branch_without_a_test_command_asks_for_one(forge: Forge) -> None:
    result = run(scheduled_job(schedule(task="fix-default-branch")))
    assert (result.state, result.outcome) == (JobState.FAILED, Outcome.COULD_NOT)
    assert result.error is not None
    assert result.error.startswith("fix-default-branch needs a test command")


def test_a_forge_that_cannot_be_reached_fails_the_run_naming_it(forge: Forge) -> None:
    forge.down = True
    result = run(scheduled_job(schedule()))
    assert (result.state, result.outcome) == (JobState.FAILED, Outcome.ERROR)
    assert result.error == "I could not reach the forge for this scheduled run: HTTP 503"


# Where a run works, and what its push does.


def plan(decision: Decision, pull: providers.PullInfo | None, branch: str | None = None) -> Plan:
    repo = providers.RepoInfo(REPO, "https://forge.test/octo/widgets.git", "main")
    scheduled = runner.ScheduledRun(
        job_id=1,
        trigger={},
        requester_id=None,
        branch=branch,
        title="Tidy up",
        schedule_id=1,
        name="Weekly Tidy",
        task="custom",
        prompt=None,
        test_command=None,
        dry_run=False,
        max_iterations=None,
        max_cost_usd=None,
        repo=f"{NAME}:{REPO}",
        remembered=decision.remembered,
    )
    return runner._plan(scheduled, NAME, repo, decision, pull)


def test_an_update_works_on_the_open_pull_requests_branch() -> None:
    pull = providers.PullInfo(4, PULL_URL, "resolver/schedule-other", "main")
    found = plan(Decision(Action.UPDATE, Remembered(OPEN, BRANCH)), pull)
    assert (found.base, found.branch, found.checkout) == ("main", BRANCH, BRANCH)
    assert found.update and found.pr_url == PULL_URL


def test_a_proposal_starts_from_the_default_branch_on_the_schedules_own_branch() -> None:
    found = plan(Decision(Action.PROPOSE, Remembered()), None)
    assert (found.base, found.branch, found.checkout) == (
        "main",
        runner.schedule_branch("Weekly Tidy"),
        None,
    )
    assert not found.update
    assert plan(Decision(Action.PROPOSE, Remembered()), None, "resolver/earlier").branch == (
        "resolver/earlier"
    )


def test_a_scheduled_push_credits_no_one_and_the_schedule_remembers_its_branch(
    forge: Forge, origin: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, _ = origin
    schedule_id = schedule()
    job_id = scheduled_job(schedule_id)
    scheduled = runner._load(job_id)
    assert scheduled is not None
    proposal = plan(Decision(Action.PROPOSE, Remembered()), None)
    proposal = replace(proposal, repo=replace(proposal.repo, clone_url=str(bare)))
    pushed: dict[str, str] = {}
    clone = git_repo.clone(str(bare), tmp_path / "clone")
    base = git_repo.head(clone)
    tree = git_repo.git(clone, "rev-parse", f"{base}^{{tree}}").strip()
    agent = AgentResult("changed_code", "Tidied.", None, 2, 0.01, 10, 5)
    with session_scope() as session:
        after = runner._pushing(session, scheduled, proposal, {}, pushed, get_settings())
        after(Work(clone, base, tree), agent)

    branch = runner.schedule_branch("Weekly Tidy")
    assert pushed == {"branch": branch, "head": run_git("rev-parse", branch, cwd=bare).strip()}
    message = run_git("log", "-1", "--format=%ae%n%B", branch, cwd=bare)
    assert message.startswith("resolver@users.noreply\nTidy up")
    assert "Co-authored-by" not in message
    with session_scope() as session:
        assert jobs.get_job(session, job_id).branch == branch
