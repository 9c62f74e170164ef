"""GitHub end to end: `conflicts: fix` on the default branch. A push to main that leaves the
bot's pull request conflicted makes the bot merge main into its branch, the (scripted) model
resolving the conflict, pushed without force; without the opt-in, or after someone else
pushed to the branch, nothing moves."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import IDENTITY, GitHttpServer, branch_head, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, widgets
from tests.e2e.stack import Stack, by_step, ingress, running_stack
from tests.e2e.test_github_conflicts import (
    BRANCH,
    MAIN_CALC,
    ask,
    bots_pull,
    commit_to,
    is_ancestor,
    parents,
)
from tests.integrations.deliveries import github, load, post
from tests.integrations.github.conftest import INSTALLATION_ID, REPO
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(420)

OPT_IN = {".resolver/config.yml": "conflicts: fix\n"}
README = {"README.md": "# widgets\n"}
RESOLVED = "def add(a, b):\n    return a + b  # adds\n"


def push_to(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    git: GitHttpServer,
    ref: str,
    after: str,
) -> int | None:
    """GitHub's push delivery for `ref` of the stand-in's repository; the job id once it and
    its callbacks ended, or None when it answered 204."""
    payload: dict[str, Any] = copy.deepcopy(load("github", "push__branch"))
    payload.update(ref=ref, after=after, deleted=False, created=False)
    payload["repository"].update(
        full_name=REPO, name=REPO.split("/")[1], clone_url=git.url_for(REPO), default_branch="main"
    )
    payload["installation"] = {"id": INSTALLATION_ID}
    answer = post(ingress(stack, monkeypatch), github("push", payload))
    if answer.status_code == 204:
        return None
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def commit_files(bare: Path, branch: str, files: dict[str, str], message: str) -> str:
    """`commit_to`, with folders (`.resolver/config.yml`)."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        run_git("clone", "--quiet", "--branch", branch, str(bare), str(work))
        for name, text in files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        run_git("add", "-A", cwd=work)
        run_git(*IDENTITY, "commit", "--quiet", "-m", message, cwd=work)
        run_git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=work)
    head = branch_head(bare, branch)
    assert head is not None
    return head


def bots_branch_after_an_ask(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitHubAPI,
    git: GitHttpServer,
    bare: Path,
    on_main: dict[str, str],
) -> tuple[int, str]:
    """The bot's pull request, then `on_main` committed to main, then alice's `@resolver
    rebase` merged it cleanly: the branch's head is the bot's, and a job of hers made the
    branch. The pull request and that head."""
    number = bots_pull(api, bare)
    commit_files(bare, "main", on_main, "Opt in, or not")
    stack.link("alice", "github", str(ALICE_ID), "alice")
    stack.start_worker()
    asked = stack.job(ask(stack, monkeypatch, api, git, number))
    assert (asked.state, asked.outcome) == ("succeeded", "changed_code"), asked.error
    head = branch_head(bare, BRANCH)
    assert head is not None
    return number, head


def test_a_conflicting_push_to_main_is_merged_into_the_bots_branch_without_force(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.llm.set_script(
            by_step(
                [
                    tool("execute_bash", command="grep -c '<<<<<<<' calc.py"),
                    tool(
                        "str_replace_editor", command="create", path="calc.py", file_text=RESOLVED
                    ),
                    finish("changed_code", "Kept the fix and main's comment."),
                ]
            )
        )
        _, old = bots_branch_after_an_ask(
            stack, monkeypatch, github_api, git_server, bare, {**OPT_IN, **README}
        )
        other = push_to(stack, monkeypatch, git_server, "refs/heads/feature", old)
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = push_to(stack, monkeypatch, git_server, "refs/heads/main", main)
        assert job_id is not None
        again = push_to(stack, monkeypatch, git_server, "refs/heads/main", main)
        assert again is not None
        job, again_job = stack.job(job_id), stack.job(again)
        callbacks = stack.callbacks(job_id) + stack.callbacks(again)

    assert other is None  # another branch's push: 204, no job
    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.requester == "alice"  # for the requester of the job that made the branch
    new = branch_head(bare, BRANCH)
    assert new is not None
    assert is_ancestor(bare, old, new)  # no force-push
    assert parents(bare, new) == [old, main]
    assert run_git("--git-dir", str(bare), "show", f"{new}:calc.py") == RESOLVED
    assert job.result["pulls"]["1"]["outcome"] == "changed_code"
    # The same push again: the branch already has it; the model is not asked twice.
    assert (again_job.state, again_job.outcome) == ("succeeded", "no_changes")
    assert branch_head(bare, BRANCH) == new
    assert len(stack.llm.requests) == 3
    assert callbacks == []  # a push has no conversation: nothing is said


def test_without_the_opt_in_a_conflicting_push_moves_nothing(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        _, old = bots_branch_after_an_ask(stack, monkeypatch, github_api, git_server, bare, README)
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = push_to(stack, monkeypatch, git_server, "refs/heads/main", main)
        assert job_id is not None
        job = stack.job(job_id)

    assert (job.state, job.outcome) == ("succeeded", "no_changes")
    assert "conflicts: fix" in job.result["skipped"]
    assert branch_head(bare, BRANCH) == old
    assert not stack.llm.requests


def test_after_someone_else_pushed_to_the_branch_nothing_moves(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        bots_branch_after_an_ask(
            stack, monkeypatch, github_api, git_server, bare, {**OPT_IN, **README}
        )
        human = commit_to(bare, BRANCH, {"NOTES.md": "mine\n"}, "A human's commit")
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = push_to(stack, monkeypatch, git_server, "refs/heads/main", main)
        assert job_id is not None
        job = stack.job(job_id)

    assert (job.state, job.outcome) == ("succeeded", "no_changes"), job.error
    assert "someone else pushed" in job.result["pulls"]["1"]["summary"]
    assert branch_head(bare, BRANCH) == human
    assert not stack.llm.requests
