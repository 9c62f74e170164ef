"""GitLab end to end: a merge request GitLab refuses once is opened on the retry (a note that ends
in a draft merge request, on each forge: test_mention.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.gitlab.standin.api import GitLabAPI, MergeRequest, Note, Project
from integrations.standin.git_http import GitHttpServer
from tests.conftest import ResolverEnv
from tests.e2e.gitlab_flow import (
    BOT,
    gitlab_settings,
    note_hook,
    store_bot_token,
    widgets,
)
from tests.e2e.stack import Stack, fix_script, ingress, running_stack
from tests.integrations.deliveries import gitlab, post

pytestmark = pytest.mark.timeout(300)
CREATE_MR = "POST /projects/{id}/merge_requests"


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
