"""Egress end to end: a mention → a real worker whose sandbox reaches out through its own proxy
under an allowlist; the agent's command that met a block is named in the status comment and
in the pull request. The outside hosts are the egress tests' stand-ins (a container of the
test's own, on a network of its own that is the proxy's uplink)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, run_git
from sandbox import ensure_image, ensure_proxy_image
from sandbox.naming import LABEL_DEPLOYMENT
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment, widgets
from tests.e2e.stack import FIXED, SUMMARY, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.sandbox.standins import ALLOWED, DENIED, Outside, outside
from tests.support.llm_server import finish, tool

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]

REACH = f"curl -sS -m 20 http://{ALLOWED}/hello"
REFUSED = f"curl -s -m 20 -o /dev/null -w '%{{http_code}}' http://{DENIED}/hello"


@pytest.fixture
def deployment() -> str:
    return f"e2e-egress-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def stand_ins(deployment: str) -> Iterator[Outside]:
    ensure_proxy_image(offline=True)
    with outside(ensure_image(offline=True), deployment, {LABEL_DEPLOYMENT: deployment}) as out:
        yield out


def test_a_blocked_host_is_named_in_the_status_and_the_pull_request(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
    deployment: str,
    stand_ins: Outside,
) -> None:
    _, bare = widgets(github_api, git_server)
    settings = {
        **github_settings(github_api, key_file),
        "RESOLVER_DEPLOYMENT_ID": deployment,
        "RESOLVER_SANDBOX_EGRESS": "allowlist",
        "RESOLVER_SANDBOX_EGRESS_ALLOW": ALLOWED,
        "RESOLVER_SANDBOX_EGRESS_UPLINK": stand_ins.network,
    }
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.push(
            tool("execute_bash", command=REACH),
            tool("execute_bash", command=REFUSED),
            tool(
                "str_replace_editor",
                command="str_replace",
                path="calc.py",
                old_str="    return a - b\n",
                new_str="    return a + b\n",
            ),
            finish("changed_code", SUMMARY),
        )
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        payload = issue_comment(github_api, git_server, "@resolver please fix add()")
        answer = post(client, github("issue_comment.created", payload))
        assert answer.status_code == 202, answer.text
        job_id = int(answer.json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert run_git("--git-dir", str(bare), "show", f"{job.branch}:calc.py") == FIXED

    # What the agent saw: the allowed host answered, the denied one was named as a block.
    observations = [
        str(message.get("content"))
        for message in stack.llm.requests[-1]["messages"]
        if message.get("role") == "tool"
    ]
    assert "hello from outside" in observations[0]
    assert "403" in observations[1] and f"blocked {DENIED}" in observations[1]
    assert "not allowed" in observations[1]

    line = f"blocked: {DENIED}, 1 request, during `{REFUSED}`"
    [pull] = github_api.pulls
    assert line in pull.body, pull.body
    [status] = [c.body for c in github_api.comments.values() if c.login == BOT_LOGIN]
    assert line in status, status
    assert ALLOWED not in status and ALLOWED not in pull.body  # reached, so not reported
