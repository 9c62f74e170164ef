"""GitLab end to end: `conflicts: fix` on the default branch. A Push Hook for main that leaves
the bot's merge request conflicted makes the bot merge main into its branch, the (scripted)
model resolving the conflict, pushed without force; a push to another branch answers 204, and
the same push again moves nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from integrations.gitlab.standin.api import GitLabAPI, Project
from integrations.standin.git_http import GitHttpServer, branch_head, run_git
from tests.conftest import ResolverEnv
from tests.e2e.gitlab_flow import PROJECT, bot_notes_on, gitlab_settings, widgets
from tests.e2e.stack import Stack, by_step, ingress, running_stack
from tests.e2e.test_github_conflicts import (
    MAIN_CALC,
    commit_to,
    is_ancestor,
    leaves_markers,
    parents,
)
from tests.e2e.test_github_conflicts_fix import OPT_IN, README, RESOLVED, commit_files
from tests.e2e.test_gitlab_conflicts import (
    BRANCH,
    ask,
    bots_merge_request,
    start,
)
from tests.integrations.deliveries import gitlab, load, post
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(420)

LIST_MRS = "GET /projects/{id}/merge_requests"


def push_to(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitLabAPI,
    project: Project,
    ref: str,
    after: str,
) -> int | None:
    """GitLab's Push Hook for `ref` of the project, pushed by alice; the job id once it and its
    callbacks ended, or None when it answered 204."""
    payload: dict[str, Any] = load("gitlab", "Push_Hook__branch")
    payload.update(
        ref=ref,
        after=after,
        checkout_sha=after,
        user_id=api.add_user("alice"),
        user_username="alice",
        user_name="Alice",
        project_id=project.id,
    )
    payload["project"].update(
        id=project.id,
        path_with_namespace=PROJECT,
        git_http_url=project.clone_url,
        default_branch=project.default_branch,
        web_url=f"{api.url}/{PROJECT}",
    )
    answer = post(ingress(stack, monkeypatch), gitlab("Push Hook", payload))
    if answer.status_code == 204:
        return None
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def test_a_conflicting_push_to_main_is_merged_into_the_bots_branch_without_force(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = widgets(gitlab_api, gitlab_git)
    merge_request = bots_merge_request(gitlab_api, project, bare)
    commit_files(bare, "main", {**OPT_IN, **README}, "Opt in")
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
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
        start(stack, gitlab_api)
        # alice's `@resolver rebase` merged main cleanly: the head is the bot's, and a job of
        # hers made the branch.
        asked = stack.job(ask(stack, monkeypatch, gitlab_api, project, merge_request))
        assert (asked.state, asked.outcome) == ("succeeded", "changed_code"), asked.error
        old = branch_head(bare, BRANCH)
        assert old is not None
        before = len(gitlab_api.requests)
        other = push_to(stack, monkeypatch, gitlab_api, project, "refs/heads/feature", old)
        calls_for_other = len(gitlab_api.requests) - before
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = push_to(stack, monkeypatch, gitlab_api, project, "refs/heads/main", main)
        assert job_id is not None
        again = push_to(stack, monkeypatch, gitlab_api, project, "refs/heads/main", main)
        assert again is not None
        job, again_job = stack.job(job_id), stack.job(again)
        callbacks = stack.callbacks(job_id) + stack.callbacks(again)

    assert other is None  # another branch's push: 204, no job
    assert calls_for_other == 0  # and no call to GitLab
    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.requester == "alice"  # for the requester of the job that made the branch
    new = branch_head(bare, BRANCH)
    assert new is not None
    assert is_ancestor(bare, old, new)  # no force-push
    assert parents(bare, new) == [old, main]
    assert run_git("--git-dir", str(bare), "show", f"{new}:calc.py") == RESOLVED
    assert job.result["pulls"][str(merge_request.iid)]["outcome"] == "changed_code"
    # The merge requests were listed as GitLab documents it: open ones into main.
    listings = [r for r in gitlab_api.calls(LIST_MRS) if "target_branch" in r.query]
    assert [(r.query["state"], r.query["target_branch"], r.status) for r in listings] == [
        (["opened"], ["main"], 200)
    ] * 2  # once per push to main
    # The same push again: the branch already has it; the model is not asked twice.
    assert (again_job.state, again_job.outcome) == ("succeeded", "no_changes")
    assert branch_head(bare, BRANCH) == new
    assert len(stack.llm.requests) == 3
    assert callbacks == []  # a push has no conversation: nothing is said


def test_after_someone_else_pushed_to_the_branch_nothing_moves(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = widgets(gitlab_api, gitlab_git)
    merge_request = bots_merge_request(gitlab_api, project, bare)
    commit_files(bare, "main", {**OPT_IN, **README}, "Opt in")
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        start(stack, gitlab_api)
        asked = stack.job(ask(stack, monkeypatch, gitlab_api, project, merge_request))
        assert (asked.state, asked.outcome) == ("succeeded", "changed_code"), asked.error
        human = commit_to(bare, BRANCH, {"NOTES.md": "mine\n"}, "A human's commit")
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = push_to(stack, monkeypatch, gitlab_api, project, "refs/heads/main", main)
        assert job_id is not None
        job = stack.job(job_id)

    assert (job.state, job.outcome) == ("succeeded", "no_changes"), job.error
    assert "someone else pushed" in job.result["pulls"][str(merge_request.iid)]["summary"]
    assert branch_head(bare, BRANCH) == human
    assert not stack.llm.requests


def test_a_conflict_left_is_said_once_on_the_merge_request(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = widgets(gitlab_api, gitlab_git)
    merge_request = bots_merge_request(gitlab_api, project, bare)
    commit_files(bare, "main", {**OPT_IN, **README}, "Opt in")
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        stack.llm.set_script(by_step(leaves_markers()))
        start(stack, gitlab_api)
        asked = stack.job(ask(stack, monkeypatch, gitlab_api, project, merge_request))
        assert (asked.state, asked.outcome) == ("succeeded", "changed_code"), asked.error
        old = branch_head(bare, BRANCH)
        said_before = len(bot_notes_on(gitlab_api, merge_request.iid))
        main = commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment add()")
        job_id = push_to(stack, monkeypatch, gitlab_api, project, "refs/heads/main", main)
        again = push_to(stack, monkeypatch, gitlab_api, project, "refs/heads/main", main)
        assert job_id is not None and again is not None
        job = stack.job(job_id)

    assert job.state == "failed"
    assert branch_head(bare, BRANCH) == old  # nothing pushed
    said = bot_notes_on(gitlab_api, merge_request.iid)[said_before:]
    assert len(said) == 1, said  # once, though the same base was pushed twice
    assert "I could not merge `main`" in said[0] and "`calc.py`" in said[0]
    assert f"/jobs/{job_id})" in said[0]
