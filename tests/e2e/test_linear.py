"""Linear end to end: a signed mention in an issue's comments → the team's routed GitHub
repository → a real worker → the sandboxed agent, with one status reply in the thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.linear.standin.api import LinearAPI
from integrations.standin.git_http import GitHttpServer, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import widgets
from tests.e2e.jira_flow import (
    GITHUB_TOKEN,
    alice_on_github,
    route_to_widgets,
    store_installation_token,
)
from tests.e2e.linear_flow import (
    OAUTH_TOKEN,
    ORGANIZATION,
    TEAM,
    Workspace,
    bot_comments,
    comment_create,
    linear_settings,
    mention,
    workspace,
)
from tests.e2e.stack import SUMMARY, fix_script, ingress, running_stack
from tests.integrations.deliveries import linear, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(300)
ANSWER = "add() returns a - b: it subtracts."


@pytest.fixture
def linear_api() -> Iterator[LinearAPI]:
    api = LinearAPI()
    yield api
    api.close()


def _prepare(space: Workspace, github: GitHubAPI) -> None:
    """What an admin sets up: the team's repository, alice's accounts, the workspace's token."""
    route_to_widgets("linear", TEAM)
    alice_on_github(github, "linear", space.alice.id)
    store_installation_token("linear", ORGANIZATION, OAUTH_TOKEN)


def test_a_mention_in_a_comment_ends_in_one_draft_pull_request_and_one_edited_reply(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    linear_api: LinearAPI,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
) -> None:
    space = workspace(linear_api)
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **linear_settings(linear_api, github_api)) as stack:
        _prepare(space, github_api)
        stack.llm.push(*fix_script())
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        trigger, payload = comment_create(space, mention("please fix add()"))
        answer = post(client, linear(payload))
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
    assert SUMMARY in pull.body
    assert job.pr_url == f"{github_api.web_url}/{REPO}/pull/{pull.number}"

    # One reply in the trigger's thread, created once and then updated; 👀 on the trigger.
    [status] = bot_comments(space)
    assert status.parent_id == trigger.id
    assert status.body.startswith(
        "✅ **Done** on `octo/widgets`. Opened the draft pull request " + job.pr_url
    )
    [created] = linear_api.calls("commentCreate")
    assert created.variables["input"]["parentId"] == trigger.id
    updates = linear_api.calls("commentUpdate")
    # Posted at intake, before the routed repository is known; an edit names it.
    assert any(f"`{REPO}`" in u.variables["input"]["body"] for u in updates)
    assert updates and updates[-1].variables == {"id": status.id, "input": {"body": status.body}}
    assert trigger.reactions == [(space.bot.id, "eyes")]
    assert OAUTH_TOKEN not in logs and GITHUB_TOKEN not in logs

    assert "Co-authored-by: alice <" in log


def test_a_rate_limited_reply_is_sent_after_retry_after_and_only_once(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    linear_api: LinearAPI,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
) -> None:
    space = workspace(linear_api)
    widgets(github_api, git_server)
    linear_api.fail("commentCreate", 429, headers={"Retry-After": "1"})
    with running_stack(resolver_env, tmp_path, **linear_settings(linear_api, github_api)) as stack:
        _prepare(space, github_api)
        stack.llm.push(tool("execute_bash", command="cat calc.py"), finish("answered", ANSWER))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        _, payload = comment_create(space, mention("what does add() do?"))
        job_id = int(post(client, linear(payload)).json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)
        callbacks = {c.id: c for c in stack.callbacks(job_id)}
        tried = {c.id: stack.attempts(c.id) for c in callbacks.values()}

    assert job.outcome == "answered"
    [status] = bot_comments(space)
    assert ANSWER in status.body
    assert [call.status for call in linear_api.calls("commentCreate")] == [429, 200]

    # The callback that met the limit recorded it, with Retry-After.
    [limited_id] = [i for i, attempts in tried.items() if attempts[0].outcome == "transient"]
    limited = tried[limited_id]
    assert (limited[0].outcome, limited[0].status, limited[0].retry_after) == (
        "transient",
        429,
        1.0,
    )
    assert "RATELIMITED" in (limited[0].detail or "")
    if callbacks[limited_id].state == "sent":
        # Its own retry posted the reply, after Retry-After.
        assert [a.outcome for a in limited] == ["transient", "ok"]
        assert (limited[1].at - limited[0].at).total_seconds() >= 1.0
    else:
        # A newer status update posted the reply first, and made this one moot: by design,
        # status messages are rendered from the job, never from the callback.
        assert callbacks[limited_id].state == "superseded" and len(limited) == 1
        newer = [i for i in tried if i > limited_id and callbacks[i].action == "status"]
        assert any(a.outcome == "ok" for i in newer for a in tried[i])
    # Every other callback went through on its first try, or was made moot by a newer one.
    for i, attempts in tried.items():
        if i != limited_id:
            expected = ["ok"] if callbacks[i].state == "sent" else []
            assert callbacks[i].state in ("sent", "superseded")
            assert [a.outcome for a in attempts] == expected
