"""End to end: the bounds of `conflicts: fix`. One push to main with several open pull requests
handles each as the README says (a clean one is left alone, a conflicted one of the bot's is
resolved, someone's own and one a person pushed to are not touched); on each forge, a conflict
the model cannot resolve is said once on its pull (request), the same base is not tried again,
and a new base commit is."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, branch_head, run_git
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
    leaves_markers,
    parents,
    show,
)
from tests.e2e.forges import Forge, GitHubForge, ended
from tests.e2e.stack import FIXED, by_step, running_stack
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import Reply, finish, tool

pytestmark = pytest.mark.timeout(600)

MAIN = "refs/heads/main"
CLEAN = "resolver/8-add-docs"
HUMAN = "resolver/9-add-again"
THEIRS = "feature/add"


def resolve_script() -> list[Reply]:
    return [
        tool("str_replace_editor", command="create", path="calc.py", file_text=RESOLVED),
        finish("changed_code", "Kept the fix and main's comment."),
    ]


def pull_from(api: GitHubAPI, bare: Path, branch: str, files: dict[str, str], by: str) -> int:
    """A pull request into main from a new `branch` with `files` committed on main's head."""
    run_git("--git-dir", str(bare), "branch", branch, "main")
    commit_to(bare, branch, files, f"Work on {branch}")
    return api.add_pull(REPO, branch, "main", branch, by).number


def reports(forge: Forge, number: int) -> list[str]:
    return [body for body in forge.said_on_pull(number) if "not resolved" in body]


def test_one_push_handles_each_open_pull_request_as_documented(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    forge = GitHubForge(github_api, git_server, key_file)
    bare = forge.widgets()
    bots_branch(bare)
    conflicted = forge.bots_pull(BRANCH)
    clean = pull_from(github_api, bare, CLEAN, {"DOCS.md": "add() adds\n"}, BOT_LOGIN)
    human = pull_from(github_api, bare, HUMAN, {"calc.py": FIXED}, BOT_LOGIN)
    theirs = pull_from(github_api, bare, THEIRS, {"calc.py": FIXED}, "alice")
    commit_to(bare, "main", {**OPT_IN, **README}, "Opt in")
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        forge.start(stack)
        for number in (conflicted, clean, human):  # alice's jobs make the bot's branches hers
            done = stack.job(forge.comment_on_pull(stack, monkeypatch, number, REBASE))
            assert done.outcome == "changed_code", done.error
        heads = {branch: branch_head(bare, branch) for branch in (BRANCH, CLEAN, THEIRS)}
        heads[HUMAN] = commit_to(bare, HUMAN, {"NOTES.md": "mine\n"}, "A human's commit")
        stack.llm.set_script(by_step(resolve_script()))
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = ended(forge.push(stack, monkeypatch, MAIN, main))
        job = stack.job(job_id)
        callbacks = stack.callbacks(job_id)

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    pulls = job.result["pulls"]
    assert set(pulls) == {str(conflicted), str(clean), str(human)}  # not someone's own
    # The conflicted one of the bot's: resolved by the model, merged without force.
    assert pulls[str(conflicted)]["outcome"] == "changed_code"
    new = branch_head(bare, BRANCH)
    assert new is not None and parents(bare, new) == [heads[BRANCH], main]
    assert show(bare, new, "calc.py") == RESOLVED
    # The clean one: left alone, as GitHub would still merge it.
    assert "still merges cleanly" in pulls[str(clean)]["summary"]
    assert branch_head(bare, CLEAN) == heads[CLEAN]
    # The one a person pushed to: theirs now.
    assert "someone else pushed" in pulls[str(human)]["summary"]
    assert branch_head(bare, HUMAN) == heads[HUMAN]
    # Someone's own pull request: never touched, though it conflicts too.
    assert branch_head(bare, THEIRS) == heads[THEIRS]
    assert len(stack.llm.requests) == 2  # one agent session, for the one conflicted
    assert callbacks == []  # nothing failed: nothing to say
    assert all(reports(forge, n) == [] for n in (conflicted, clean, human, theirs))


def test_a_conflict_left_is_said_once_and_tried_again_only_on_a_new_base(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare = forge.widgets()
    bots_branch(bare)
    number = forge.bots_pull(BRANCH)
    commit_to(bare, "main", {**OPT_IN, **README}, "Opt in")
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(leaves_markers()))
        forge.start(stack)
        asked = stack.job(forge.comment_on_pull(stack, monkeypatch, number, REBASE))
        assert asked.outcome == "changed_code", asked.error  # alice's job made the branch
        old = branch_head(bare, BRANCH)
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        failed_id = ended(forge.push(stack, monkeypatch, MAIN, main))
        asked_after_failure = len(stack.llm.requests)
        said = reports(forge, number)
        again_id = ended(forge.push(stack, monkeypatch, MAIN, main))
        asked_after_again = len(stack.llm.requests)
        stack.llm.set_script(by_step(resolve_script()))
        moved = commit_to(bare, "main", {"NOTES.md": "notes\n"}, "Add notes")
        moved_id = ended(forge.push(stack, monkeypatch, MAIN, moved))
        failed, again, later = stack.job(failed_id), stack.job(again_id), stack.job(moved_id)

    # The failure: nothing pushed, and said on the pull with its files and the job.
    assert (failed.state, failed.outcome) == ("failed", "could_not")
    assert failed.result["pulls"][str(number)]["conflicts"] == ["calc.py"]
    [report] = said
    assert report.startswith(
        f"I could not merge `main` into `{BRANCH}`: the conflicts in `calc.py` are not resolved, "
        "so nothing was pushed."
    )
    assert f"/jobs/{failed_id})" in report
    # The same base again: not tried (the model is not asked), and not said again.
    assert (again.state, again.outcome) == ("succeeded", "no_changes")
    assert "already updated once" in again.result["pulls"][str(number)]["summary"]
    assert asked_after_again == asked_after_failure == 2
    # A new base commit: tried again, and this time resolved.
    assert (later.state, later.outcome) == ("succeeded", "changed_code"), later.error
    new = branch_head(bare, BRANCH)
    assert new is not None and parents(bare, new) == [old, moved]
    assert show(bare, new, "calc.py") == RESOLVED
    assert len(stack.llm.requests) == 4
    assert reports(forge, number) == said
