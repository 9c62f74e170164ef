"""The repository's MCP servers as the agent's tools, on real parts: a stdio server (the `mcp`
SDK) that the sandbox runs, a streamable-HTTP one the host calls with a credential from the
vault, the real loop and the scripted model."""

from __future__ import annotations

import json
import logging
import secrets
import shutil
from pathlib import Path
from typing import Any

import pytest

from resolver.agent.mcp_config import McpConfigError
from resolver.web.steps import block_of
from tests.agent.conftest import AgentEnv, git, make_repo
from tests.agent.test_loop import bash, of_kind, session, stored
from tests.support.llm_server import ScriptedLLMServer, finish, tool
from tests.support.mcp_servers import ANSWER, STDIO_SERVER, remote_mcp, vendor_mcp

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]
DOCS = {"command": ["python3", "docs_server.py"], "tools": {"deny": ["drop_tables"]}}


@pytest.fixture(scope="module")
def mcp_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository that carries the stdio server and the SDK it runs on."""
    root = make_repo(tmp_path_factory.mktemp("mcp") / "base", {"docs_server.py": STDIO_SERVER})
    vendor_mcp(root / "vendor")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "sdk")
    return root


def with_config(base: Path, tmp: Path, config: dict[str, Any]) -> Path:
    """A copy of `base` with `config` as its `.resolver/config.yml`; the settings reread."""
    from resolver.core.settings import get_settings

    get_settings.cache_clear()
    repo = tmp / "repo"
    shutil.copytree(base, repo, symlinks=True)
    (repo / ".resolver").mkdir()
    (repo / ".resolver" / "config.yml").write_text(json.dumps(config))
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "mcp")
    return repo


def store_credential(repo: str, server: str, value: str, url: str) -> None:
    """Store the server's credential, bound to the origin of `url`."""
    from resolver.contract.mcp import parse_origin
    from resolver.core.settings import get_settings
    from resolver.store.db import session_scope
    from resolver.store.mcp_credentials import set_mcp_credential
    from resolver.store.vault import Vault

    with session_scope() as db:
        vault = Vault(get_settings().fernet_keys)
        set_mcp_credential(db, vault, repo, server, "Authorization", value, parse_origin(url))


def tools_offered(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or ()]


def test_a_stdio_and_a_remote_server_answer_the_model_and_the_calls_are_on_the_page(
    job_id: int,
    mcp_base: Path,
    agent_env: AgentEnv,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = "mcp-planted-" + secrets.token_hex(12)
    with remote_mcp(token) as remote:
        monkeypatch.setenv("RESOLVER_MCP_ALLOW", "localhost")
        config = {"mcp": {"docs": DOCS, "tracker": {"url": remote.url}}}
        repo = with_config(mcp_base, agent_env.tmp, config)
        store_credential(str(repo), "tracker", f"Bearer {token}", remote.url)
        # The sandbox is searched for the credential without the command holding it.
        search = (
            f"t=$(python3 -c 'print(\"{token[::-1]}\"[::-1])'); "
            'grep -rslF "$t" /workspace /tmp /home /etc /run ; env | grep -cF "$t"; '
            "echo searched"
        )
        llm_server.push(
            tool("docs__search", query="how to deploy"),
            tool("tracker__lookup", key="K-7"),
            bash(search),
            finish("answered", "The docs and the ticket say so."),
        )
        with caplog.at_level(logging.DEBUG):
            result = session(job_id, repo, instruction="what do the docs say?")

    assert result.agent.outcome == "answered"
    assert result.diff == ""  # the server left nothing in the change
    offered = tools_offered(llm_server.requests[0])
    assert {"docs__search", "tracker__lookup"} <= set(offered)
    assert "docs__drop_tables" not in offered  # the repository's deny list
    events, _ = stored(job_id)
    [servers] = of_kind(events, "mcp")
    assert [s.get("error") for s in servers["servers"]] == [None, None]
    origin = remote.url.removesuffix("/mcp")
    assert [s.get("credential") for s in servers["servers"]] == [None, f"sent to {origin}"]
    docs, tracker, searched, _finished = of_kind(events, "observation")
    assert ANSWER in docs["content"] and "how to deploy" in docs["content"]
    assert docs["content"].startswith("<<<USER-TEXT")  # fenced as untrusted text
    assert (docs["mcp_server"], docs["remote"]) == ("docs", False)
    assert "K-7: the build is red" in tracker["content"] and tracker["remote"] is True
    assert remote.calls == ["K-7"]
    # The answers reached the model.
    replies = [m["content"] for m in llm_server.requests[2]["messages"] if m["role"] == "tool"]
    assert ANSWER in replies[0] and "build is red" in replies[1]
    # The calls are on the job page.
    action = next(e for e in events if e.kind == "action" and e.payload["tool"] == "docs__search")
    page = block_of(action.seq, action.kind, action.payload, None)
    assert page is not None and "docs__search" in json.dumps(page.__dict__, default=str)
    # The remote server got its credential; the model, the record, the logs and the sandbox
    # never saw it.
    assert f"Bearer {token}" in remote.seen_authorizations
    assert searched["content"].startswith("0\nsearched"), searched["content"]
    assert token not in json.dumps(llm_server.requests)
    assert token not in json.dumps([dict(e.payload) for e in events])
    assert token not in caplog.text


def test_a_server_that_hangs_or_floods_is_cut_off_with_a_message(
    job_id: int,
    mcp_base: Path,
    agent_env: AgentEnv,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with remote_mcp("t0k") as remote:
        monkeypatch.setenv("RESOLVER_MCP_ALLOW", "localhost")
        # Long enough for a loaded machine to start the stdio servers; the hanging ones wait it out.
        monkeypatch.setenv("RESOLVER_MCP_TIMEOUT", "10")
        remote_entry = {"url": remote.url}
        servers = {"docs": DOCS, "docs2": DOCS, "tracker": remote_entry, "tracker2": remote_entry}
        repo = with_config(mcp_base, agent_env.tmp, {"mcp": servers})
        for name in ("tracker", "tracker2"):
            store_credential(str(repo), name, "Bearer t0k", remote.url)
        llm_server.push(
            tool("docs__flood"),
            tool("docs__search", query="again"),
            tool("docs2__hang"),
            bash("pgrep -fc '[d]ocs_server'; echo counted"),
            tool("tracker__flood"),
            tool("tracker2__hang"),
            finish("answered", "The servers were cut off."),
        )
        result = session(job_id, repo)

    assert result.agent.outcome == "answered"
    events, _ = stored(job_id)
    flood, again, hang, processes, remote_flood, remote_hang, _done = of_kind(events, "observation")
    assert flood["error"] and "docs sent a message over 1000000 bytes" in flood["content"]
    assert "cut off" in flood["content"] and len(flood["content"]) < 200
    assert again["error"] and again["content"] == flood["content"]
    assert hang["error"] and "docs2 did not answer within 10 s" in hang["content"]
    assert processes["content"] == "0\ncounted\n[exit code: 0]"  # both servers were ended
    assert "tracker sent a message over 1000000 bytes" in remote_flood["content"]
    assert remote_hang["error"] and "tracker2 did not answer within 10 s" in remote_hang["content"]
    assert hang["duration"] < 20 and remote_hang["duration"] < 20


def test_a_bad_entry_refuses_the_job_and_names_it(
    job_id: int, mcp_base: Path, agent_env: AgentEnv, llm_server: ScriptedLLMServer
) -> None:
    config = {"mcp": {"docs": DOCS, "tracker": {"url": "https://mcp.elsewhere.example/mcp"}}}
    repo = with_config(mcp_base, agent_env.tmp, config)
    with pytest.raises(McpConfigError, match=r"`mcp.tracker.url`.*mcp.elsewhere.example"):
        session(job_id, repo)
    assert llm_server.requests == []
