"""Slack end to end: a signed mention in a channel → a real worker → the sandboxed agent → a draft
PR on the GitHub stand-in, told in one reply in the mention's thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations import registry
from integrations.github.standin.api import GitHubAPI
from integrations.slack.standin.api import Message, SlackAPI
from integrations.standin.git_http import GitHttpServer, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from resolver.store.repo_defaults import set_route
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import widgets
from tests.e2e.slack_flow import (
    ALICE_GITHUB_TOKEN,
    BOT_TOKEN,
    BOT_USER,
    CHANNEL,
    app_mention,
    link_alice,
    slack_settings,
)
from tests.e2e.stack import SUMMARY, Stack, fix_script, ingress, running_stack
from tests.integrations.deliveries import post, slack
from tests.integrations.github.conftest import REPO

pytestmark = pytest.mark.timeout(300)


def run_mention(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, slack_api: SlackAPI, text: str
) -> tuple[Job, str]:
    """Send alice's signed mention; wait until its job and callbacks end. The job and the
    mention's ts."""
    stack.start_worker()
    client = ingress(stack, monkeypatch)
    payload, ts = app_mention(slack_api, text)
    answer = post(client, slack(payload))
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return stack.job(job_id), ts


def replies(slack_api: SlackAPI, ts: str) -> list[Message]:
    """The bot's messages in the thread of the message `ts`."""
    return [m for m in slack_api.thread(CHANNEL, ts) if m.user == BOT_USER]


def assert_pull_request(job: Job, github_api: GitHubAPI, bare: Path) -> None:
    """The job pushed its branch with the fix, and opened one draft PR from it, as alice."""
    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch is not None and job.branch.startswith(f"resolver/job{job.id}-")
    diff = run_git("--git-dir", str(bare), "diff", "main", job.branch)
    assert "-    return a - b\n+    return a + b" in diff
    [pull] = github_api.pulls
    assert (pull.head, pull.base, pull.draft) == (job.branch, "main", True)
    assert SUMMARY in pull.body
    assert job.pr_url == f"{github_api.web_url}/{REPO}/pull/{pull.number}"


def test_a_mention_naming_the_repository_ends_in_one_draft_pull_request(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack_api: SlackAPI,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **slack_settings(slack_api, github_api)) as stack:
        link_alice(stack, github_api)
        stack.llm.push(*fix_script())
        job, ts = run_mention(stack, monkeypatch, slack_api, f"please fix add() repo={REPO}")
        logs = stack.logs()

    assert_pull_request(job, github_api, bare)
    # One reply in the mention's thread: posted once, naming the repository, then updated
    # in place until it carried the PR.
    [reply] = replies(slack_api, ts)
    assert reply.thread_ts == ts
    [posted] = slack_api.calls("chat.postMessage")
    assert posted.params["thread_ts"] == ts and f"`{REPO}`" in posted.params["text"]
    updates = slack_api.calls("chat.update")
    assert updates and {u.params["ts"] for u in updates} == {reply.ts}
    assert reply.edited_ts is not None and job.pr_url is not None and job.pr_url in reply.text
    # Tagged where people do not see it, so a post whose answer is lost is found, not repeated.
    tag = {"event_type": "resolver_message", "event_payload": {"tag": f"status-{job.id}"}}
    assert reply.metadata == tag and "<!--" not in reply.text
    assert slack_api.channels[CHANNEL].messages[ts].reactions == {"eyes": [BOT_USER]}
    assert BOT_TOKEN not in logs and ALICE_GITHUB_TOKEN not in logs


def test_a_mention_without_a_repository_works_on_the_channel_s_route(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack_api: SlackAPI,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **slack_settings(slack_api, github_api)) as stack:
        link_alice(stack, github_api)
        with session_scope() as session:
            set_route(session, "slack", CHANNEL, *registry.check_route("slack", REPO))
        stack.llm.push(*fix_script())
        job, ts = run_mention(stack, monkeypatch, slack_api, "please fix add()")

    assert_pull_request(job, github_api, bare)
    [reply] = replies(slack_api, ts)
    assert job.pr_url is not None and job.pr_url in reply.text


def test_a_mention_without_a_repository_or_a_route_is_asked_which_repository(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack_api: SlackAPI,
    github_api: GitHubAPI,
) -> None:
    with running_stack(resolver_env, tmp_path, **slack_settings(slack_api, github_api)) as stack:
        link_alice(stack, github_api)
        job, ts = run_mention(stack, monkeypatch, slack_api, "please fix add()")

    assert job.outcome == "could_not" and job.branch is None
    assert stack.llm.requests == []  # the agent never ran
    [reply] = replies(slack_api, ts)
    assert "Which repository" in reply.text
    assert "repo=" in reply.text and "resolver routes set" in reply.text
    assert github_api.pulls == []
