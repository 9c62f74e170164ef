"""`conflicts: fix` after a push to the default branch (features/conflicts/worker/fix.py
`update_on_base_push`), without a stack: the Sixth test provider installed as a forge whose
open pull requests and writers are plain values, over a real git origin. Which of the bot's
pull requests it takes, why it leaves each of the others, and that it speaks in no
conversation. (Updating one pull request is in test_conflicts.py.)"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from integrations import registry
from resolver.contract import outbound as providers
from resolver.contract.triggers import read_trigger
from resolver.core.job import JobContext, RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.features.ci.contract import QUIET
from resolver.features.conflicts.worker.fix import update_on_base_push
from resolver.store import jobs
from resolver.store.accounts import AccountError, add_user, get_user
from resolver.store.db import session_scope
from resolver.worker.values import Snapshot
from tests.agent.conftest import git, make_repo
from tests.conftest import ResolverEnv
from tests.integrations.sixth.provider import NAME, PROVIDER

REPO = "octo/widgets"
HUMAN = ("-c", "user.name=Ada", "-c", "user.email=ada@example.com")


@dataclass
class Forge:
    """The forge's side, in memory: its open pull requests and who may push."""

    pulls: list[providers.PullInfo] = field(default_factory=list)
    writers: set[str] = field(default_factory=set)

    def git_env(self, clone_url: str) -> dict[str, str]:
        return {}

    def can_write(self, full_name: str, user: providers.ForgeUser) -> bool:
        return full_name == REPO and user.external_id in self.writers


@pytest.fixture
def forge(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> Forge:
    found = Forge(writers={"U-ada"})

    def open_pulls(
        context: Any, requester_id: int | None, full_name: str, base: str, settings: Any
    ) -> tuple[providers.PullInfo, ...]:
        return tuple(pull for pull in found.pulls if pull.base == base)

    provider = replace(
        PROVIDER,
        forge=lambda context, requester_id, settings: found,  # type: ignore[arg-type,return-value]
        open_pulls=open_pulls,
    )
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, provider))
    return found


def bot() -> tuple[str, ...]:
    name = get_settings().bot_name
    return ("-c", f"user.name={name}", "-c", f"user.email={name}@users.noreply")


def branch(repo: Path, name: str, files: dict[str, str], who: tuple[str, ...]) -> None:
    git(repo, "checkout", "-q", "-b", name, "main")
    for path, text in files.items():
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, *who, "commit", "-qm", f"work on {name}")
    git(repo, "checkout", "-q", "main")


def origin(tmp_path: Path, config: str | None = "conflicts: fix\n") -> Path:
    """Four of the bot's branches and a person's, from one base; then `main` moves on and
    conflicts with `a.txt`."""
    files = {"a.txt": "one\n", "b.txt": "b\n"}
    if config is not None:
        files[".resolver/config.yml"] = config
    repo = make_repo(tmp_path / "origin", files)
    branch(repo, "resolver/clean", {"b.txt": "B\n"}, bot())
    branch(repo, "resolver/taken", {"a.txt": "ONE\n"}, HUMAN)
    branch(repo, "resolver/orphan", {"a.txt": "One\n"}, bot())
    branch(repo, "resolver/lapsed", {"a.txt": "1\n"}, bot())
    branch(repo, "ada/feature", {"a.txt": "uno\n"}, HUMAN)
    (repo / "a.txt").write_text("one!\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "main")
    return repo


def pull(number: int, head: str) -> providers.PullInfo:
    return providers.PullInfo(number, f"https://forge.test/{REPO}/pull/{number}", head, "main")


def made_by(head: str, who: str) -> None:
    """A job of `who` (a linked user) made `head`."""
    with session_scope() as session:
        try:
            user = get_user(session, who)
        except AccountError:
            user = add_user(session, who)
        trigger = {"repo": REPO, "sender": {"id": f"U-{who}", "login": who}}
        new = jobs.NewJob(source=NAME, task="t", repo=REPO, requester_id=user.id, trigger=trigger)
        jobs.create_job(session, new).branch = head


def pushed_to(repo: Path, branch_name: str = "main") -> tuple[JobContext, Snapshot]:
    sha = git(repo, "rev-parse", "main").strip()
    trigger = {
        "repo": REPO,
        "clone_url": str(repo),
        "default_branch": "main",
        "base_push": {"branch": branch_name, "sha": sha},
    }
    with session_scope() as session:
        job_id = jobs.create_job(
            session, jobs.NewJob(source=NAME, task="merge", trigger=trigger)
        ).id
    return JobContext(job_id, get_settings()), Snapshot(
        job_id, NAME, "merge", REPO, None, None, read_trigger(trigger), None, None
    )


def run(repo: Path, branch_name: str = "main") -> RunResult:
    ctx, snapshot = pushed_to(repo, branch_name)
    with session_scope() as session:
        result = update_on_base_push(session, ctx, snapshot)
    with session_scope() as session:
        assert jobs.get_job(session, ctx.job_id).result.get(QUIET) is True
    return result


def test_each_of_the_bots_pull_requests_is_left_for_its_own_reason(
    forge: Forge, tmp_path: Path
) -> None:
    repo = origin(tmp_path)
    heads = ["resolver/clean", "resolver/taken", "resolver/orphan", "resolver/lapsed"]
    forge.pulls = [pull(n, head) for n, head in enumerate([*heads, "ada/feature"], start=1)]
    made_by("resolver/clean", "ada")
    made_by("resolver/taken", "ada")
    made_by("resolver/lapsed", "bo")
    before = {head: git(repo, "rev-parse", head).strip() for head in heads}

    result = run(repo)
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.NO_CHANGES)
    assert result.result[QUIET] is True
    summaries = {number: done["summary"] for number, done in result.result["pulls"].items()}
    assert summaries == {
        "1": "`resolver/clean` still merges cleanly with `main`",
        "2": (
            f"someone else pushed to `resolver/taken` (its head {before['resolver/taken'][:12]} "
            "is not mine): left to them"
        ),
        "3": "no job of mine made `resolver/orphan`",
        "4": f"its requester may no longer push to `{REPO}`",
    }
    assert {head: git(repo, "rev-parse", head).strip() for head in heads} == before


def test_a_push_to_another_branch_does_nothing(forge: Forge, tmp_path: Path) -> None:
    repo = origin(tmp_path)
    forge.pulls = [pull(1, "resolver/clean")]
    result = run(repo, "release")
    assert result.result == {QUIET: True, "skipped": "the push is not to the default branch"}


def test_a_repository_that_has_not_opted_in_is_left_alone(forge: Forge, tmp_path: Path) -> None:
    repo = origin(tmp_path, config=None)
    forge.pulls = [pull(1, "resolver/clean")]
    result = run(repo)
    assert result.result == {
        QUIET: True,
        "skipped": "`conflicts: fix` is not set in .resolver/config.yml",
    }


def test_a_broken_setting_fails_quietly_saying_what_is_wrong(forge: Forge, tmp_path: Path) -> None:
    repo = origin(tmp_path, config="conflicts: rebase\n")
    result = run(repo)
    assert (result.state, result.outcome) == (JobState.FAILED, Outcome.COULD_NOT)
    assert result.error is not None
    assert result.error.startswith("I cannot update my pull requests' branches: ")
    assert result.result[QUIET] is True
