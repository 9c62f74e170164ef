"""At job time, a remote MCP server's credential goes only to the origin the operator stored it
for: a repository's config that names another port, or plain http where the credential is for
https, gets the server without it, and the job's record and the log say why, never the secret.
A credential stored before origins is not sent until it is bound. Real parts: the vault, two
streamable-HTTP servers on loopback, the `mcp` SDK."""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler
from typing import Any

import anyio
import httpx2
import pytest
from sqlalchemy import update

from resolver.agent.mcp import McpLimits, McpTools
from resolver.agent.mcp_config import parse_mcp_config
from resolver.agent.mcp_job import credentials_for
from resolver.agent.mcp_transport import BoundHeader, Guard, _CappedTransport
from resolver.contract.mcp import parse_origin
from resolver.core.settings import get_settings
from resolver.store.db import session_scope
from resolver.store.mcp_credentials import set_mcp_credential
from resolver.store.models import Credential
from resolver.store.vault import Vault
from sandbox import Allowance
from tests.support.mcp_servers import remote_mcp
from tests.support.serving import served_handler

TOKEN = "mcp-origin-0a9b8c7d6e"
NO_SANDBOX: Any = None  # remote servers are called from the host; none reaches the sandbox
LIMITS = McpLimits(timeout=10.0, max_bytes=1_000_000, output_chars=10_000)


def test_a_credential_goes_only_to_the_origin_it_was_stored_for(
    resolver_env, caplog: pytest.LogCaptureFixture
) -> None:
    with remote_mcp(TOKEN) as meant, remote_mcp(TOKEN) as other:
        port = meant.url.split(":")[2].split("/")[0]
        config = {
            "good": {"url": meant.url},
            "moved": {"url": other.url},  # the repository points the credential elsewhere
            "plain": {"url": meant.url},  # stored for https, named over http
            "old": {"url": meant.url},  # stored before origins
        }
        servers = parse_mcp_config({"mcp": config}, Allowance(("localhost",)))
        bound = {"good": meant.url, "moved": meant.url, "plain": f"https://localhost:{port}"}
        vault = Vault(get_settings().fernet_keys)
        with session_scope() as session:
            for name in config:
                origin = parse_origin(bound.get(name, meant.url))
                set_mcp_credential(
                    session, vault, "acme/app", name, "Authorization", f"Bearer {TOKEN}", origin
                )
            session.execute(update(Credential).where(Credential.kind == "old").values(origin=None))
        with session_scope() as session:
            credentials = credentials_for(session, "acme/app", servers, get_settings())

        with (
            caplog.at_level(logging.INFO),
            McpTools(servers, NO_SANDBOX, credentials, LIMITS) as tools,
        ):
            answer = tools.run("good__lookup", '{"key": "K-1"}', 30, "nonce")
            record = {entry["server"]: entry for entry in tools.record}

    assert "K-1: the build is red" in answer.content and not answer.error
    # The other server never saw the credential, and the job's record says why.
    assert f"Bearer {TOKEN}" not in other.seen_authorizations
    assert other.seen_authorizations and set(other.seen_authorizations) == {""}
    assert record["good"]["credential"] == f"sent to http://localhost:{port}"
    assert "error" not in record["good"]
    assert record["moved"]["credential"] == (
        f"not sent: it is for http://localhost:{port}, and the repository's config names "
        f"{other.url.removesuffix('/mcp')}"
    )
    assert "moved failed to start" in record["moved"]["error"]  # the server wants one
    assert record["plain"]["credential"] == (
        f"not sent: it is for https://localhost:{port}, and the repository's config names "
        f"http://localhost:{port}"
    )
    assert "resolver mcp bind <repository> old <URL>" in record["old"]["credential"]
    assert meant.seen_authorizations.count(f"Bearer {TOKEN}") >= 2  # the good one's requests
    assert meant.seen_authorizations.count("") >= 2  # the plain and the old ones
    withheld = [r for r in caplog.records if r.getMessage().startswith("agent.mcp_credential")]
    assert len(withheld) == 3
    assert TOKEN not in caplog.text and TOKEN not in json.dumps(record)


def test_a_server_that_quotes_the_bare_token_has_it_masked(
    resolver_env, caplog: pytest.LogCaptureFixture
) -> None:
    """The credential is stored as its header's value (`Bearer <token>`); a server's error
    that quotes the token alone reaches neither the model nor the job's record nor the log."""
    with remote_mcp(TOKEN) as server:
        servers = parse_mcp_config(
            {"mcp": {"good": {"url": server.url}}}, Allowance(("localhost",))
        )
        vault = Vault(get_settings().fernet_keys)
        origin = parse_origin(server.url)
        with session_scope() as session:
            set_mcp_credential(
                session, vault, "acme/app", "good", "Authorization", f"Bearer {TOKEN}", origin
            )
        with session_scope() as session:
            credentials = credentials_for(session, "acme/app", servers, get_settings())
        with (
            caplog.at_level(logging.INFO),
            McpTools(servers, NO_SANDBOX, credentials, LIMITS) as tools,
        ):
            answer = tools.run("good__expired", "{}", 30, "nonce")
    assert "is expired or revoked" in answer.content and answer.error
    assert TOKEN not in answer.content
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("resolver")]
    assert ours and not any(TOKEN in line for line in ours)


def test_a_redirect_never_carries_the_credential_to_another_origin() -> None:
    """The transport adds the header to each request on its origin alone, so even a client that
    followed every redirect (the SDK follows them only within the origin) would not carry it."""
    seen: dict[str, str | None] = {}
    where = {"to": ""}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen[self.path] = self.headers.get("X-Api-Key")
            if self.path == "/mcp":
                self.send_response(307)
                self.send_header("Location", where["to"] + "/elsewhere")
            else:
                self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    async def follow(url: str) -> int:
        header = BoundHeader(parse_origin(url), "X-Api-Key", "key-7c1d")
        transport = _CappedTransport(Guard(10_000), header)
        async with httpx2.AsyncClient(transport=transport, follow_redirects=True) as client:
            return (await client.get(url)).status_code

    with served_handler(Handler) as meant, served_handler(Handler) as other:
        where["to"] = other.replace("127.0.0.1", "localhost")  # another origin, same machine
        assert anyio.run(follow, f"{meant}/mcp") == 200
    assert seen == {"/mcp": "key-7c1d", "/elsewhere": None}
