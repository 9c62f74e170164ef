"""End to end on Forgejo, with the stack and the scripted model GitHub's end-to-end tests use:
a signed `issue_comment` mentioning the bot, from a collaborator who may write, ends in one
work-in-progress pull request on a real bare git remote and one status comment edited in
place; a stranger's mention is refused before the agent runs; a bad signature is a 401 and no
job. The Forgejo stand-in answers the API, `git http-backend` the pushes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from integrations.forgejo.standin.api import ForgejoAPI
from integrations.standin.git_http import GitHttpServer, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.stack import SUMMARY, Stack, fix_script, ingress, running_stack
from tests.integrations.deliveries import Delivery, post
from tests.integrations.forgejo.deliveries import SECRET
from tests.integrations.forgejo.flow import (
    BOT,
    BOT_TOKEN,
    ISSUE,
    REPO,
    STATUS_EDIT,
    mention,
    said,
    settings,
    widgets,
)
from tests.integrations.forgejo.flow import delivery as signed

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture
def forgejo_api(forgejo_standin: ForgejoAPI) -> ForgejoAPI:
    return forgejo_standin


@pytest.fixture
def git_server(forgejo_git: GitHttpServer) -> GitHttpServer:
    return forgejo_git


def delivery(payload: dict[str, Any], *, secret: str = SECRET) -> Delivery:
    return signed(payload, "issue_comment", secret=secret)


def run(stack: Stack, monkeypatch: pytest.MonkeyPatch, sent: Delivery) -> int:
    answer = post(ingress(stack, monkeypatch), sent)
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def test_a_mention_from_a_writer_ends_in_one_draft_pull_request(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forgejo_api: ForgejoAPI,
    git_server: GitHttpServer,
) -> None:
    repo, bare = widgets(forgejo_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings(forgejo_api)) as stack:
        stack.llm.push(*fix_script())
        stack.link("alice", "forgejo", str(forgejo_api.user_id("alice")), "alice")
        stack.start_worker()
        payload = mention(forgejo_api, repo, "alice", "@resolver please fix add()")
        job = stack.job(run(stack, monkeypatch, delivery(payload)))
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch == f"resolver/{ISSUE}-add-subtracts-instead-of-adding"
    diff = run_git("--git-dir", str(bare), "diff", "main", job.branch)
    assert "-    return a - b\n+    return a + b" in diff
    log = run_git("--git-dir", str(bare), "log", "-1", "--format=%an%n%B", job.branch)
    assert log.startswith("resolver\n") and "Co-authored-by: alice" in log

    [pull] = forgejo_api.pulls
    assert (pull.head, pull.base, pull.draft) == (job.branch, "main", True)
    assert pull.title.startswith("WIP: ")
    assert f"Fixes #{ISSUE}" in pull.body and SUMMARY in pull.body
    assert job.pr_url == f"{forgejo_api.url}/{REPO}/pulls/{pull.number}"

    # One status comment, edited in place as the job went on; 👀 on the request.
    [status] = said(forgejo_api)
    assert "**Done**" in status and job.pr_url in status
    edits = forgejo_api.calls(STATUS_EDIT)
    assert edits and all(r.status == 200 for r in edits)
    bot = forgejo_api.user_id(BOT)
    eyes = [r.content for r in forgejo_api.reactions if r.user_id == bot and r.comment_id]
    assert eyes == ["eyes"]
    assert BOT_TOKEN not in logs


def test_a_strangers_mention_is_refused_before_the_agent_runs(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forgejo_api: ForgejoAPI,
    git_server: GitHttpServer,
) -> None:
    repo, bare = widgets(forgejo_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings(forgejo_api)) as stack:
        stack.link("mallory", "forgejo", str(forgejo_api.add_user("mallory")), "mallory")
        stack.start_worker()
        payload = mention(forgejo_api, repo, "mallory", "@resolver fix it")
        job = stack.job(run(stack, monkeypatch, delivery(payload)))

    assert (job.state, job.outcome) == ("failed", "refused")
    assert stack.llm.requests == []  # the agent never ran
    assert forgejo_api.pulls == []
    assert run_git("--git-dir", str(bare), "branch", "--format=%(refname:short)").strip() == "main"
    [status] = said(forgejo_api)
    assert "only take requests from people who can push" in status and "@mallory" in status


def test_a_bad_signature_is_refused_and_makes_no_job(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forgejo_api: ForgejoAPI,
    git_server: GitHttpServer,
) -> None:
    repo, _ = widgets(forgejo_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings(forgejo_api)) as stack:
        stack.link("alice", "forgejo", str(forgejo_api.user_id("alice")), "alice")
        payload = mention(forgejo_api, repo, "alice", "@resolver please fix add()")
        answer = post(ingress(stack, monkeypatch), delivery(payload, secret="not the secret"))
        assert answer.status_code == 401
        with session_scope() as session:
            assert session.scalars(select(Job.id)).all() == []
    assert said(forgejo_api) == [] and forgejo_api.pulls == []
