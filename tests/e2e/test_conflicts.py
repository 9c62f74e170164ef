"""End to end, on each forge: `@bot rebase` on the bot's own pull (request) merges the base into
its branch. A clean merge is made by git on the host; conflicts are resolved by the (scripted)
model in the sandbox; either way the push is a fast-forward (the old head is an ancestor of the
new one). Conflicts left unresolved are reported with their files, and nothing is pushed.

Which pulls it takes, and a branch that has its base already, are decided without a stack
(tests/features/conflicts/test_worker.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.standin.git_http import branch_head
from tests.conftest import ResolverEnv
from tests.e2e.conflicts_flow import (
    BRANCH,
    MAIN_CALC,
    README,
    REBASE,
    RESOLVED,
    bots_branch,
    commit_to,
    is_ancestor,
    leaves_markers,
    parents,
    resolves,
    show,
)
from tests.e2e.forges import PULL_FORGES, Forge
from tests.e2e.stack import FIXED, by_step, running_stack

pytestmark = pytest.mark.timeout(420)


@pytest.mark.parametrize("forge", PULL_FORGES, indirect=True)
def test_a_clean_update_is_merged_by_git_and_pushed_as_a_fast_forward(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare = forge.widgets()
    old = bots_branch(bare)
    number = forge.bots_pull(BRANCH)
    main = commit_to(bare, "main", README, "Add a README")
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        forge.start(stack)
        job = stack.job(forge.comment_on_pull(stack, monkeypatch, number, REBASE))

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    new = branch_head(bare, BRANCH)
    assert new is not None
    assert parents(bare, new) == [old, main]
    assert is_ancestor(bare, old, new)
    assert show(bare, new, "calc.py") == FIXED
    assert show(bare, new, "README.md") == README["README.md"]
    assert not stack.llm.requests  # git did it all: no model, no sandbox
    assert forge.pull_count() == 1  # none opened
    assert "calc.py" in forge.opened(number).description  # it lists the branch's files
    assert any("git found no conflicts" in body for body in forge.said_on_pull(number))


@pytest.mark.parametrize("forge", PULL_FORGES, indirect=True)
def test_a_conflict_is_resolved_by_the_model_and_pushed_without_force(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare = forge.widgets()
    old = bots_branch(bare)
    number = forge.bots_pull(BRANCH)
    main = commit_to(bare, "main", {"calc.py": MAIN_CALC, "NOTES.md": "notes\n"}, "Comment")
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(resolves()))
        forge.start(stack)
        job = stack.job(forge.comment_on_pull(stack, monkeypatch, number, REBASE))
        first = stack.llm.requests[0]

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    new = branch_head(bare, BRANCH)
    assert new is not None
    assert is_ancestor(bare, old, new)  # no force-push: the old head is in the new history
    assert parents(bare, new) == [old, main]
    assert show(bare, new, "calc.py") == RESOLVED
    assert show(bare, new, "NOTES.md") == "notes\n"
    prompt = str(first["messages"])
    assert "calc.py" in prompt and "conflict" in prompt
    # The model saw the markers in its work tree (the grep counted one conflict).
    tool_results = [m for m in stack.llm.requests[1]["messages"] if m.get("role") == "tool"]
    assert "1" in str(tool_results[-1].get("content"))
    assert forge.pull_count() == 1
    assert f"Updated the draft {forge.pull_word}" in forge.said_on_pull(number)[-1]


@pytest.mark.parametrize("forge", ["github"], indirect=True)  # a push's report: test_conflicts_fix
def test_a_conflict_the_model_leaves_is_reported_with_its_files(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare = forge.widgets()
    old = bots_branch(bare)
    number = forge.bots_pull(BRANCH)
    commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment")
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(leaves_markers()))
        forge.start(stack)
        job = stack.job(forge.comment_on_pull(stack, monkeypatch, number, REBASE))

    assert (job.state, job.outcome) == ("failed", "could_not")
    assert branch_head(bare, BRANCH) == old  # nothing pushed
    assert job.result["conflicts"] == ["calc.py"]
    status = forge.said_on_pull(number)[-1]
    assert "`calc.py`" in status and "not resolved" in status
