"""GitLab end to end: a signed note mention → a real worker → the sandboxed agent → a draft MR."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.gitlab.standin.api import GitLabAPI, MergeRequest, Note, Project
from integrations.standin.git_http import GitHttpServer, run_git
from tests.conftest import ResolverEnv
from tests.e2e.gitlab_flow import (
    BOT,
    BOT_TOKEN,
    IID,
    PROJECT,
    gitlab_settings,
    note_hook,
    store_bot_token,
    widgets,
)
from tests.e2e.stack import SUMMARY, Stack, fix_script, ingress, running_stack
from tests.integrations.deliveries import gitlab, post

pytestmark = pytest.mark.timeout(300)
CREATE_MR = "POST /projects/{id}/merge_requests"
EDIT_NOTE = "PUT /projects/{id}/issues/{iid}/notes/{note_id}"


def run_mention(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, api: GitLabAPI, project: Project
) -> int:
    """Send alice's signed mention on issue #7 and wait until the job and its callbacks end."""
    stack.link("alice", "gitlab", str(api.add_user("alice")), "alice")
    store_bot_token(api)
    stack.llm.push(*fix_script())
    stack.start_worker()
    client = ingress(stack, monkeypatch)
    payload = note_hook(api, project, "@resolver please fix add()")
    answer = post(client, gitlab("Note Hook", payload))
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def bot_notes(api: GitLabAPI) -> list[Note]:
    bot = api.add_user(BOT)  # the bot's id: the same user for the same name
    return [n for n in api.notes.values() if n.author == bot]


def assert_draft_of(merge_request: MergeRequest, branch: str) -> None:
    assert (merge_request.source_branch, merge_request.target_branch) == (branch, "main")
    assert merge_request.draft and merge_request.title.startswith("Draft: ")


def test_a_note_on_an_issue_ends_in_one_draft_merge_request(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = widgets(gitlab_api, gitlab_git)
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        job_id = run_mention(stack, monkeypatch, gitlab_api, project)
        job = stack.job(job_id)
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch == f"resolver/{IID}-add-subtracts-instead-of-adding"
    diff = run_git("--git-dir", str(bare), "diff", "main", job.branch)
    assert "-    return a - b\n+    return a + b" in diff

    [merge_request] = gitlab_api.merge_requests
    assert_draft_of(merge_request, job.branch)
    assert SUMMARY in merge_request.description
    assert f"http://resolver.test/jobs/{job_id}" in merge_request.description
    assert job.pr_url == f"{gitlab_api.url}/{PROJECT}/-/merge_requests/{merge_request.iid}"

    # One status note, edited in place as the job went on; 👀 on the request.
    [status] = bot_notes(gitlab_api)
    assert "**Done**" in status.body and job.pr_url in status.body
    assert "draft merge request" in status.body
    edits = [r for r in gitlab_api.calls(EDIT_NOTE) if r.path.endswith(f"/notes/{status.id}")]
    assert edits and all(r.status == 200 for r in edits)
    [trigger] = [n for n in gitlab_api.notes.values() if n.body.startswith("@resolver")]
    assert trigger.awards == [(gitlab_api.add_user(BOT), "eyes")]
    assert BOT_TOKEN not in logs

    closes = (f"Fixes #{IID}", f"Closes #{IID}")
    assert any(line in merge_request.description for line in closes)


def test_a_merge_request_refused_with_502_is_opened_on_the_retry(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, _ = widgets(gitlab_api, gitlab_git)
    gitlab_api.fail(CREATE_MR, 502, headers={"Retry-After": "1"})
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        job_id = run_mention(stack, monkeypatch, gitlab_api, project)
        job = stack.job(job_id)
        [opening] = [c for c in stack.callbacks(job_id) if c.action == "open_pull"]
        attempts = stack.attempts(opening.id)

    assert opening.state == "sent"
    assert [(a.outcome, a.status) for a in attempts] == [("transient", 502), ("ok", None)]
    assert [r.status for r in gitlab_api.calls(CREATE_MR)] == [502, 201]
    [merge_request] = gitlab_api.merge_requests
    assert job.branch is not None
    assert_draft_of(merge_request, job.branch)
    assert job.pr_url is not None and job.pr_url.endswith(f"/merge_requests/{merge_request.iid}")
    [status] = bot_notes(gitlab_api)
    assert job.pr_url in status.body
