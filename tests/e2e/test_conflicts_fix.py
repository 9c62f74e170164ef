"""End to end, on each forge: `conflicts: fix` on the default branch. A push to main that leaves
the bot's pull (request) conflicted makes the bot merge main into its branch, the (scripted)
model resolving the conflict, pushed without force; a push to another branch answers 204, the
same push again moves nothing, and after someone else pushed to the branch nothing moves. A
conflict left, and several pulls at once: test_conflicts_bounds.py.

Which pulls a push takes, the opt-in, the once-per-base-commit bound and the report's text are
decided without a stack (tests/features/conflicts/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.standin.git_http import branch_head
from tests.conftest import ResolverEnv
from tests.e2e.conflicts_flow import (
    BRANCH,
    MAIN_CALC,
    OPT_IN,
    README,
    REBASE,
    RESOLVED,
    bots_branch,
    commit_to,
    is_ancestor,
    parents,
    resolves,
    show,
)
from tests.e2e.forges import FORGES, Forge, ended
from tests.e2e.stack import Stack, by_step, running_stack

pytestmark = pytest.mark.timeout(420)

MAIN = "refs/heads/main"


def bots_pull_after(forge: Forge, on_main: dict[str, str]) -> tuple[Path, int]:
    """The bot's pull, then `on_main` committed to main: the bare repository and its number."""
    bare = forge.widgets()
    bots_branch(bare)
    number = forge.bots_pull(BRANCH)
    commit_to(bare, "main", on_main, "Opt in, or not")
    return bare, number


def rebased(stack: Stack, monkeypatch: pytest.MonkeyPatch, forge: Forge, number: int) -> None:
    """alice's `@resolver rebase` merged main cleanly: the branch's head is the bot's, and a job
    of hers made the branch."""
    forge.start(stack)
    asked = stack.job(forge.comment_on_pull(stack, monkeypatch, number, REBASE))
    assert (asked.state, asked.outcome) == ("succeeded", "changed_code"), asked.error


def test_a_conflicting_push_to_main_is_merged_into_the_bots_branch_without_force(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare, number = bots_pull_after(forge, {**OPT_IN, **README})
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(resolves()))
        rebased(stack, monkeypatch, forge, number)
        old = branch_head(bare, BRANCH)
        assert old is not None
        before = forge.api_calls()
        other = forge.push(stack, monkeypatch, "refs/heads/feature", old)
        calls_for_other = forge.api_calls() - before
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = ended(forge.push(stack, monkeypatch, MAIN, main))
        again = ended(forge.push(stack, monkeypatch, MAIN, main))
        job, again_job = stack.job(job_id), stack.job(again)
        callbacks = stack.callbacks(job_id) + stack.callbacks(again)

    assert other is None  # another branch's push: 204, no job
    assert calls_for_other == 0  # and no call to the forge
    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.requester == "alice"  # for the requester of the job that made the branch
    new = branch_head(bare, BRANCH)
    assert new is not None
    assert is_ancestor(bare, old, new)  # no force-push
    assert parents(bare, new) == [old, main]
    assert show(bare, new, "calc.py") == RESOLVED
    assert job.result["pulls"][str(number)]["outcome"] == "changed_code"
    # The open pulls into main were listed as the forge documents it, once per push to main.
    assert forge.open_pull_listings() == [("main", 200)] * 2
    # The same push again: the branch already has it; the model is not asked twice.
    assert (again_job.state, again_job.outcome) == ("succeeded", "no_changes")
    assert branch_head(bare, BRANCH) == new
    assert len(stack.llm.requests) == 3
    assert callbacks == []  # a push has no conversation: nothing is said


# Azure DevOps too; not above, where the same push sent twice is two jobs: its push is
# keyed by the ref and the commit, so a second delivery of it is the same job.
@pytest.mark.parametrize("forge", (*FORGES, "azuredevops"), indirect=True)
def test_after_someone_else_pushed_to_the_branch_nothing_moves(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare, number = bots_pull_after(forge, {**OPT_IN, **README})
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        rebased(stack, monkeypatch, forge, number)
        human = commit_to(bare, BRANCH, {"NOTES.md": "mine\n"}, "A human's commit")
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job = stack.job(ended(forge.push(stack, monkeypatch, MAIN, main)))

    assert (job.state, job.outcome) == ("succeeded", "no_changes"), job.error
    assert "someone else pushed" in job.result["pulls"][str(number)]["summary"]
    assert branch_head(bare, BRANCH) == human
    assert not stack.llm.requests


@pytest.mark.parametrize("forge", ["github"], indirect=True)
def test_without_the_opt_in_a_conflicting_push_moves_nothing(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare, number = bots_pull_after(forge, README)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        rebased(stack, monkeypatch, forge, number)
        old = branch_head(bare, BRANCH)
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job = stack.job(ended(forge.push(stack, monkeypatch, MAIN, main)))

    assert (job.state, job.outcome) == ("succeeded", "no_changes")
    assert "conflicts: fix" in job.result["skipped"]
    assert branch_head(bare, BRANCH) == old
    assert not stack.llm.requests
