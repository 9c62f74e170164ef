"""GitLab end to end: `@bot rebase` in a note on the bot's own merge request merges the target
branch into its source branch. A clean merge is made by git on the host; a conflict is resolved
by the (scripted) model in the sandbox; either way the push is a fast-forward (the old head is
an ancestor of the new one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.gitlab.standin.api import GitLabAPI, MergeRequest, Project
from integrations.standin.git_http import GitHttpServer, branch_head, run_git
from tests.conftest import ResolverEnv
from tests.e2e.gitlab_flow import (
    BOT,
    bot_notes_on,
    gitlab_settings,
    merge_request_note,
    store_bot_token,
    widgets,
)
from tests.e2e.stack import FIXED, Stack, by_step, ingress, running_stack
from tests.e2e.test_github_conflicts import MAIN_CALC, commit_to, is_ancestor, parents
from tests.integrations.deliveries import gitlab, post
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(420)

BRANCH = "resolver/7-add-subtracts"
RESOLVED = "def add(a, b):\n    return a + b  # adds\n"


def bots_merge_request(api: GitLabAPI, project: Project, bare: Path) -> MergeRequest:
    """The bot's merge request: `BRANCH` fixes add() on top of the first commit of main."""
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    commit_to(bare, BRANCH, {"calc.py": FIXED}, "Fix add()")
    return api.add_merge_request(project, BRANCH, "Fix add()", author=api.add_user(BOT))


def ask(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitLabAPI,
    project: Project,
    merge_request: MergeRequest,
) -> int:
    """alice's `@resolver rebase` on the merge request; the job id, once it and its callbacks
    ended."""
    payload = merge_request_note(api, project, merge_request, "@resolver rebase", "alice")
    answer = post(ingress(stack, monkeypatch), gitlab("Note Hook", payload))
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def start(stack: Stack, api: GitLabAPI) -> None:
    stack.link("alice", "gitlab", str(api.add_user("alice")), "alice")
    store_bot_token(api)
    stack.start_worker()


def test_a_clean_update_is_merged_by_git_and_pushed_as_a_fast_forward(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = widgets(gitlab_api, gitlab_git)
    merge_request = bots_merge_request(gitlab_api, project, bare)
    old = branch_head(bare, BRANCH)
    main = commit_to(bare, "main", {"README.md": "# widgets\n"}, "Add a README")
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        start(stack, gitlab_api)
        job = stack.job(ask(stack, monkeypatch, gitlab_api, project, merge_request))

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    new = branch_head(bare, BRANCH)
    assert new is not None and old is not None
    assert parents(bare, new) == [old, main]
    assert is_ancestor(bare, old, new)
    assert run_git("--git-dir", str(bare), "show", f"{new}:calc.py") == FIXED
    assert run_git("--git-dir", str(bare), "show", f"{new}:README.md") == "# widgets\n"
    assert not stack.llm.requests  # git did it all: no model, no sandbox
    assert len(gitlab_api.merge_requests) == 1  # none opened
    assert "calc.py" in merge_request.description  # the description lists the branch's files
    assert any("git found no conflicts" in body for body in bot_notes_on(gitlab_api, 1))


def test_a_conflict_is_resolved_by_the_model_and_pushed_without_force(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = widgets(gitlab_api, gitlab_git)
    merge_request = bots_merge_request(gitlab_api, project, bare)
    old = branch_head(bare, BRANCH)
    main = commit_to(bare, "main", {"calc.py": MAIN_CALC, "NOTES.md": "notes\n"}, "Comment")
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
        job = stack.job(ask(stack, monkeypatch, gitlab_api, project, merge_request))
        first = stack.llm.requests[0]

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    new = branch_head(bare, BRANCH)
    assert new is not None and old is not None
    assert is_ancestor(bare, old, new)  # no force-push: the old head is in the new history
    assert parents(bare, new) == [old, main]
    assert run_git("--git-dir", str(bare), "show", f"{new}:calc.py") == RESOLVED
    assert run_git("--git-dir", str(bare), "show", f"{new}:NOTES.md") == "notes\n"
    prompt = str(first["messages"])
    assert "calc.py" in prompt and "conflict" in prompt
    # The model saw the markers in its work tree (the grep counted one conflict).
    tool_results = [m for m in stack.llm.requests[1]["messages"] if m.get("role") == "tool"]
    assert "1" in str(tool_results[-1].get("content"))
    assert len(gitlab_api.merge_requests) == 1
    assert "merge request" in bot_notes_on(gitlab_api, merge_request.iid)[-1]
