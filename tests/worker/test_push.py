"""What the worker pushes after the agent, against a real git origin: the agent's tree as the
bot's commit on the job's branch, under another name when someone else's branch has it, only
forward on a pull request's branch (recorded first, and taken back by a retry while nobody
pushed on top), unfinished work only when the operator allows it; and one job at a time per
branch."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from resolver.agent import git as git_repo
from resolver.agent.session import Work
from resolver.agent.task import AgentResult
from resolver.contract import outbound as providers
from resolver.contract.results import BranchPush, read_result
from resolver.contract.triggers import read_trigger
from resolver.core.job import JobContext
from resolver.core.settings import get_settings
from resolver.core.states import Outcome
from resolver.features.reviews.worker import note_pushed
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.worker.push import branch_lock, push, take_back_push
from resolver.worker.values import Plan, Snapshot, Stop
from tests.agent.conftest import git, make_repo
from tests.conftest import ResolverEnv

BRANCH = "resolver/fix-7"
AUTHOR = ("Ada", "ada@example.com")


@pytest.fixture
def origin(resolver_env: ResolverEnv, tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin", {"app.py": "print('hi')\n"})


@pytest.fixture
def session(resolver_env: ResolverEnv) -> Iterator[Session]:
    """The run's session, as `worker.execute` hands it to the runner."""
    with session_scope() as session:
        yield session


def new_job(title: str = "Fix the greeting") -> Snapshot:
    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source="github", task="fix it"))
        job_id = job.id
    trigger = {"title": title}
    return Snapshot(
        job_id, "github", "fix it", "octo/widgets", "ada", None, read_trigger(trigger), None, None
    )


def plan_for(origin: Path, branch: str = BRANCH, update: bool = False) -> Plan:
    info = providers.RepoInfo("octo/widgets", str(origin), "main")
    return Plan("github", info, "main", branch, branch if update else None, update)


def agent(outcome: str = "changed_code") -> AgentResult:
    return AgentResult(outcome, "Added the exclamation mark.", None, 3, 0.01, 10, 5)  # type: ignore[arg-type]


def work_on(origin: Path, tmp_path: Path, checkout: str | None = None) -> Work:
    """A private clone with the agent's change written as a tree on top of its head."""
    clone = git_repo.clone(str(origin), tmp_path / f"clone-{uuid.uuid4().hex[:8]}", checkout)
    base = git_repo.head(clone)
    blob = git_repo.git(clone, "hash-object", "-w", "--stdin", stdin=b"print('hi!')\n").strip()
    tree = git_repo.git(clone, "mktree", stdin=f"100644 blob {blob}\tapp.py\n".encode()).strip()
    return Work(clone, base, tree)


def branch_of(job_id: int) -> str | None:
    with session_scope() as session:
        return jobs.get_job(session, job_id).branch


def pushing_of(job_id: int) -> tuple[BranchPush | None, str | None]:
    """The push the job recorded it was making, and the commit it noted as pushed."""
    with session_scope() as session:
        result = read_result(jobs.get_job(session, job_id).result)
        return result.pushing, result.pushed_sha


def push_someones_commit(origin: Path, branch: str = BRANCH) -> str:
    """Someone commits to `branch` of the origin; the branch's new head."""
    git(origin, "checkout", "-q", branch)
    (origin / "other.py").write_text("x = 1\n")
    git(origin, "add", "-A")
    git(origin, "-c", "user.name=Bo", "-c", "user.email=bo@example.com", "commit", "-qm", "mine")
    git(origin, "checkout", "-q", "main")
    return git(origin, "rev-parse", branch).strip()


def pushed_to_the_pull(session: Session, origin: Path, tmp_path: Path) -> tuple[Snapshot, str]:
    """A follow-up's push onto the pull request's branch BRANCH, its commit noted on the job as
    the reviews' replies note it; the job and the branch's head before the push."""
    git(origin, "branch", BRANCH)
    before = git(origin, "rev-parse", BRANCH).strip()
    snapshot = new_job()
    hook = push(
        session,
        snapshot,
        plan_for(origin, update=True),
        {},
        AUTHOR,
        get_settings(),
        note_pushed(snapshot.id),
    )
    hook(work_on(origin, tmp_path, BRANCH), agent())
    assert git(origin, "rev-parse", f"{BRANCH}^").strip() == before
    return snapshot, before


def test_the_agents_tree_is_pushed_as_the_bots_commit_crediting_the_requester(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    snapshot = new_job()
    pushed: list[tuple[str, str]] = []
    hook = push(
        session,
        snapshot,
        plan_for(origin),
        {},
        AUTHOR,
        get_settings(),
        on_pushed=lambda b, s: pushed.append((b, s)),
    )
    hook(work_on(origin, tmp_path), agent())
    head = git(origin, "rev-parse", BRANCH).strip()
    assert pushed == [(BRANCH, head)]
    assert git(origin, "show", f"{head}:app.py") == "print('hi!')\n"
    bot = get_settings().bot_name
    message = git(origin, "log", "-1", "--format=%an <%ae>%n%B", head)
    assert message.startswith(f"{bot} <{bot}@users.noreply>\nFix the greeting")
    assert "Co-authored-by: Ada <ada@example.com>" in message
    assert branch_of(snapshot.id) == BRANCH


def test_a_branch_name_someone_else_uses_gets_the_jobs_number(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    git(origin, "branch", BRANCH)
    theirs = git(origin, "rev-parse", BRANCH).strip()
    snapshot = new_job()
    push(session, snapshot, plan_for(origin), {}, AUTHOR, get_settings())(
        work_on(origin, tmp_path), agent()
    )
    assert git(origin, "rev-parse", BRANCH).strip() == theirs
    assert git(origin, "show", f"{BRANCH}-{snapshot.id}:app.py") == "print('hi!')\n"
    assert branch_of(snapshot.id) == f"{BRANCH}-{snapshot.id}"


def test_a_new_branch_is_recorded_on_the_job_before_it_is_pushed(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    """Committed before the push, in the run's session: a retry after a push that failed (or a
    worker killed while pushing) knows the branch is its own."""
    git(origin, "branch", f"{BRANCH}/taken")  # so that the push cannot create BRANCH
    snapshot = new_job()
    hook = push(session, snapshot, plan_for(origin), {}, AUTHOR, get_settings())
    with pytest.raises(git_repo.RepoError):
        hook(work_on(origin, tmp_path), agent())
    assert branch_of(snapshot.id) == BRANCH


def test_a_pull_requests_branch_only_moves_forward(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    git(origin, "branch", BRANCH)
    work = work_on(origin, tmp_path, BRANCH)
    theirs = push_someones_commit(origin)  # while the agent works
    hook = push(session, new_job(), plan_for(origin, update=True), {}, AUTHOR, get_settings())
    with pytest.raises(git_repo.RepoError):
        hook(work, agent())
    assert git(origin, "rev-parse", BRANCH).strip() == theirs


def test_a_push_onto_a_pull_requests_branch_is_recorded_before_it_is_made(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    """Committed before the push: a retry after a worker killed once the push was made, and
    before the job was recorded, knows what it pushed onto whose head."""
    git(origin, "branch", BRANCH)
    work = work_on(origin, tmp_path, BRANCH)
    push_someones_commit(origin)  # so that the push fails
    snapshot = new_job()
    hook = push(session, snapshot, plan_for(origin, update=True), {}, AUTHOR, get_settings())
    with pytest.raises(git_repo.RepoError):
        hook(work, agent())
    pushing, _ = pushing_of(snapshot.id)
    assert pushing is not None and (pushing.branch, pushing.base) == (BRANCH, work.base)
    assert git_repo.git(work.clone, "rev-parse", f"{pushing.sha}^").strip() == work.base


def test_a_retry_takes_back_its_earlier_push_onto_a_pull_request(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    snapshot, before = pushed_to_the_pull(session, origin, tmp_path)
    assert pushing_of(snapshot.id)[1] == git(origin, "rev-parse", BRANCH).strip()
    take_back_push(session, snapshot.id, plan_for(origin, update=True), {}, get_settings())
    assert git(origin, "rev-parse", BRANCH).strip() == before
    assert pushing_of(snapshot.id) == (None, None)
    # Taken back once: a later retry finds nothing to do.
    take_back_push(session, snapshot.id, plan_for(origin, update=True), {}, get_settings())
    assert git(origin, "rev-parse", BRANCH).strip() == before


def test_a_commit_pushed_on_top_of_the_earlier_attempts_is_never_overwritten(
    session: Session, origin: Path, tmp_path: Path
) -> None:
    snapshot, _ = pushed_to_the_pull(session, origin, tmp_path)
    theirs = push_someones_commit(origin)
    take_back_push(session, snapshot.id, plan_for(origin, update=True), {}, get_settings())
    assert git(origin, "rev-parse", BRANCH).strip() == theirs
    assert pushing_of(snapshot.id) == (None, None)


def test_a_branch_moved_after_the_lease_was_read_is_left_as_it_is(
    origin: Path, tmp_path: Path
) -> None:
    git(origin, "branch", BRANCH)
    clone = git_repo.clone(str(origin), tmp_path / "clone")
    ours = git_repo.remote_head(clone, BRANCH)
    assert ours is not None
    theirs = push_someones_commit(origin)
    with pytest.raises(git_repo.RepoError, match="stale info"):
        git_repo.push_over(clone, ours, BRANCH, expected=ours, auth=None)
    assert git(origin, "rev-parse", BRANCH).strip() == theirs


@pytest.mark.parametrize("outcome", ["could_not", "stopped", "answered"])
def test_work_the_agent_did_not_finish_is_not_pushed_by_default(
    session: Session, origin: Path, tmp_path: Path, outcome: str
) -> None:
    snapshot = new_job()
    push(session, snapshot, plan_for(origin), {}, AUTHOR, get_settings())(
        work_on(origin, tmp_path), agent(outcome)
    )
    assert git(origin, "branch", "--list", BRANCH) == ""
    assert branch_of(snapshot.id) is None


def test_unfinished_work_is_pushed_when_the_operator_allows_it(
    session: Session, origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESOLVER_PUSH_UNFINISHED", "true")
    get_settings.cache_clear()
    push(session, new_job(), plan_for(origin), {}, AUTHOR, get_settings())(
        work_on(origin, tmp_path), agent("stopped")
    )
    assert git(origin, "show", f"{BRANCH}:app.py") == "print('hi!')\n"
    push(session, new_job(), plan_for(origin, "resolver/answer"), {}, AUTHOR, get_settings())(
        work_on(origin, tmp_path), agent("answered")
    )
    assert git(origin, "branch", "--list", "resolver/answer") == ""


def test_a_second_job_on_the_same_branch_is_told_to_wait(origin: Path) -> None:
    first, second = JobContext(1, get_settings()), JobContext(2, get_settings())
    with branch_lock(plan_for(origin), first):
        assert len(first.on_beat) == 1  # the heartbeat renews the lock
        with pytest.raises(Stop) as stopped, branch_lock(plan_for(origin), second, wait=0.2):
            pass
    assert stopped.value.outcome == Outcome.ERROR
    assert str(stopped.value) == (
        f"another job is working on `{BRANCH}`; mention me again when it has finished."
    )
    assert first.on_beat == []
    with branch_lock(plan_for(origin), second):
        pass
