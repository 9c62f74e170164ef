"""Jira end to end: a signed mention on a ticket → the project's routed GitHub repository → a
real worker → the sandboxed agent → a draft PR, and one Jira comment edited in place."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.jira.standin.api import API, JiraAPI
from integrations.standin.git_http import GitHttpServer, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import widgets
from tests.e2e.jira_flow import (
    GITHUB_TOKEN,
    JIRA_EMAIL,
    JIRA_TOKEN,
    PROJECT,
    alice_on_github,
    bot_comments,
    comment_created,
    jira_settings,
    jira_site,
    mention,
    route_to_widgets,
    store_installation_token,
)
from tests.e2e.stack import SUMMARY, fix_script, ingress, running_stack
from tests.integrations.deliveries import jira, post
from tests.integrations.github.conftest import REPO

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def jira_api() -> Iterator[JiraAPI]:
    api = JiraAPI()
    yield api
    api.close()


def test_a_mention_on_a_ticket_ends_in_one_draft_pull_request_on_the_routed_repository(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    jira_api: JiraAPI,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
) -> None:
    site = jira_site(jira_api)
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **jira_settings(site, github_api)) as stack:
        route_to_widgets("jira", PROJECT)
        alice_on_github(github_api, "jira", site.alice.account_id)
        store_installation_token("jira", jira_api.site, f"{JIRA_EMAIL}:{JIRA_TOKEN}")
        stack.llm.push(*fix_script())
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        payload = comment_created(site, mention(site, "please fix add()"))
        answer = post(client, jira(payload))
        assert answer.status_code == 202, answer.text
        job_id = int(answer.json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch == f"resolver/job{job_id}-add-subtracts-instead-of-adding"
    diff = run_git("--git-dir", str(bare), "diff", "main", job.branch)
    assert "-    return a - b\n+    return a + b" in diff
    log = run_git("--git-dir", str(bare), "log", "-1", "--format=%an%n%B", job.branch)
    assert log.startswith("resolver\n")

    [pull] = github_api.pulls
    assert (pull.repo, pull.head, pull.base, pull.draft) == (REPO, job.branch, "main", True)
    assert SUMMARY in pull.body and "Fixes #" not in pull.body  # a Jira key is no GitHub issue
    assert job.pr_url == f"{github_api.web_url}/{REPO}/pull/{pull.number}"

    # One comment on the ticket, in wiki markup, edited in place up to its final state.
    [status] = bot_comments(site)
    assert status.body.startswith(
        "✅ *Done* on {{octo/widgets}}. Opened the draft pull request " + job.pr_url
    )
    assert SUMMARY in status.body and "**" not in status.body
    # Tagged where people do not see it, so a post whose answer is lost is found, not repeated.
    assert status.properties == {"resolver.message": {"tag": f"status-{job.id}"}}
    assert "<!--" not in status.body
    # Posted once, at intake (before the routed repository is known), then edited: the first
    # edit after planning names the repository.
    [_posted] = jira_api.calls(f"POST {API}/issue/{{issueIdOrKey}}/comment")
    edits = jira_api.calls(f"PUT {API}/issue/{{issueIdOrKey}}/comment/{{id}}")
    assert any(f"{{{{{REPO}}}}}" in edit.body["body"] for edit in edits)
    assert edits and edits[-1].body == {"body": status.body}
    # Neither token reached a log line.
    basic = base64.b64encode(f"{JIRA_EMAIL}:{JIRA_TOKEN}".encode()).decode()
    assert not [secret for secret in (GITHUB_TOKEN, JIRA_TOKEN, basic) if secret in logs]

    assert "Co-authored-by: alice <" in log
