"""End to end on Bitbucket Cloud, with the stack and the scripted model GitHub's end-to-end
tests use: a signed `pullrequest:comment_created` mentioning the bot, from someone who may
write, ends in one draft pull request on a real bare git remote and one status comment edited
in place; a follow-up on the bot's own pull request continues its branch; a stranger's
mention is refused before the agent runs; a bad signature is a 401 and no job. The Bitbucket
stand-in answers the API, `git http-backend` the pushes."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.standin.git_http import GitHttpServer, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.stack import SUMMARY, Stack, fix_script, ingress, running_stack
from tests.integrations.bitbucket.flow import (
    BOT_TOKEN,
    REPO,
    STATUS_EDIT,
    asking_pull,
    comment,
    delivery,
    said,
    settings,
    widgets,
)
from tests.integrations.deliveries import Delivery, post

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
EVENT = "pullrequest:comment_created"


def run(stack: Stack, monkeypatch: pytest.MonkeyPatch, sent: Delivery) -> int:
    answer = post(ingress(stack, monkeypatch), sent)
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def test_a_mention_becomes_a_draft_pull_request_and_a_follow_up_continues_its_branch(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    bitbucket_standin: BitbucketAPI,
    bitbucket_git: GitHttpServer,
) -> None:
    api = bitbucket_standin
    repo, bare = widgets(api, bitbucket_git)
    asked = asking_pull(api, repo, bare)
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.llm.push(*fix_script())
        stack.link("alice", "bitbucket", api.add_user("alice"), "alice")
        stack.start_worker()
        payload = comment(api, asked, "alice", "@resolver please fix add()")
        job = stack.job(run(stack, monkeypatch, delivery(payload, EVENT)))
        [pull] = [p for p in api.pulls if p.author == api.add_user("resolver")]
        first_head = run_git("--git-dir", str(bare), "rev-parse", job.branch).strip()

        stack.llm.push(*fix_script())
        again = comment(api, pull, "alice", "@resolver also keep add() documented")
        followup = stack.job(run(stack, monkeypatch, delivery(again, EVENT)))
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch is not None and job.branch.startswith(f"resolver/{asked.id}-")
    diff = run_git("--git-dir", str(bare), "diff", asked.head, job.branch)
    assert "-    return a - b\n+    return a + b" in diff
    assert (pull.head, pull.base, pull.draft) == (job.branch, asked.head, True)
    assert SUMMARY in pull.description
    assert job.pr_url == f"{api.url}/{REPO}/pull-requests/{pull.id}"

    # One status comment on the asking pull request, edited in place: the acknowledgement.
    [status] = said(api, asked.id)
    assert "**Done**" in status and job.pr_url in status
    edits = api.calls(STATUS_EDIT)
    assert edits and all(r.status == 200 for r in edits)
    assert BOT_TOKEN not in logs

    # The follow-up on the bot's pull request worked on its branch: no second pull request.
    assert followup.state == "succeeded", followup.error
    assert followup.branch == job.branch
    assert len([p for p in api.pulls if p.author == api.add_user("resolver")]) == 1
    log = run_git("--git-dir", str(bare), "log", "--format=%H", job.branch).split()
    assert first_head in log


def test_a_strangers_mention_is_refused_before_the_agent_runs(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    bitbucket_standin: BitbucketAPI,
    bitbucket_git: GitHttpServer,
) -> None:
    api = bitbucket_standin
    repo, bare = widgets(api, bitbucket_git)
    asked = asking_pull(api, repo, bare)
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.link("mallory", "bitbucket", api.add_user("mallory"), "mallory")
        stack.start_worker()
        payload = comment(api, asked, "mallory", "@resolver fix it")
        job = stack.job(run(stack, monkeypatch, delivery(payload, EVENT)))

    assert (job.state, job.outcome) == ("failed", "refused")
    assert stack.llm.requests == []
    assert [p.id for p in api.pulls] == [asked.id]
    branches = run_git("--git-dir", str(bare), "branch", "--format=%(refname:short)").split()
    assert sorted(branches) == ["main", asked.head]
    [status] = said(api, asked.id)
    assert "only take requests from people who can push" in status and "@mallory" in status


@pytest.mark.parametrize("secret", ["not the secret", None], ids=["bad", "unsigned"])
def test_a_bad_or_missing_signature_is_refused_and_makes_no_job(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    bitbucket_standin: BitbucketAPI,
    bitbucket_git: GitHttpServer,
    secret: str | None,
) -> None:
    api = bitbucket_standin
    repo, bare = widgets(api, bitbucket_git)
    asked = asking_pull(api, repo, bare)
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.link("alice", "bitbucket", api.add_user("alice"), "alice")
        payload = comment(api, asked, "alice", "@resolver please fix add()")
        answer = post(ingress(stack, monkeypatch), delivery(payload, EVENT, secret=secret))
        assert answer.status_code == 401
        with session_scope() as session:
            assert session.scalars(select(Job.id)).all() == []
    assert said(api, asked.id) == [] and [p.id for p in api.pulls] == [asked.id]
