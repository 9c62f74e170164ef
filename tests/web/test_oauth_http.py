"""Authlib's requests (the code exchange, the keys an ID token is checked against, any other)
read at most a capped answer, through the proxy the environment names: a real Authlib client
as the web registers it, against loopback servers. The exchange through the sign-in's page is
in test_sessions."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

import httpx2
import pytest

from resolver.contract.signin import OAuthClient
from resolver.web.oauth_http import AnswerTooLargeError
from resolver.web.signin import build_oauth
from tests.support.serving import EchoProxy, served_handler

HUGE: Final = 64 * 1024 * 1024
"""An answer far past the cap; finite, so that a client without one reads it in a second or two
instead of filling memory until the exchange's deadline."""


def huge_answer(sent: list[int], *, declared: bool) -> type[BaseHTTPRequestHandler]:
    """A handler answering any request with a HUGE JSON body (its length `declared` or not),
    counting in `sent` what it could write before the client hung up."""

    class Huge(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if declared:
                self.send_header("Content-Length", str(HUGE))
            self.end_headers()  # else HTTP/1.0: the body ends when the connection does
            chunk = b" " * (1024 * 1024)
            try:
                for _ in range(HUGE // len(chunk)):
                    self.wfile.write(chunk)
                    sent[0] += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                return

        do_POST = do_GET

        def log_message(self, *_args: object) -> None:
            return None

    return Huge


def _client(base: str) -> Any:
    """The Authlib client the web registers for an OpenID Connect provider at `base`."""
    oidc = OAuthClient(
        client_id="c",
        client_secret="s",
        authorize_url=f"{base}/authorize",
        access_token_url=f"{base}/token",
        scope="openid",
        issuer=base,
        jwks_url=f"{base}/keys",
    )
    return build_oauth([("acme", oidc)]).create_client("acme")


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "undeclared"])
def test_the_keys_of_an_id_token_are_read_within_the_cap(declared: bool) -> None:
    """A provider's keys (JWKS) larger than the cap are refused, before their body when their
    length says so, else once the cap is read; the exchange then fails as any refused one."""
    sent = [0]
    with (
        served_handler(huge_answer(sent, declared=declared)) as huge,
        pytest.raises(httpx2.DecodingError),
    ):
        asyncio.run(_client(huge).fetch_jwk_set())
    assert sent[0] < HUGE // 4, sent[0]  # a megabyte read, and what the sockets held


def test_the_requests_go_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Given a transport, httpx2 reads no proxy from the environment: the capped one does."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    with served_handler(EchoProxy) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        keys = asyncio.run(_client("http://provider.invalid").fetch_jwk_set())
    assert keys["asked"] == "http://provider.invalid/keys"


def encoded_answer(body: bytes, encoding: str) -> type[BaseHTTPRequestHandler]:
    """A handler answering with `body` as it is, saying it is in `encoding` (though the client
    asked for none)."""

    class Encoded(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            return None

    return Encoded


KEYS: Final = json.dumps({"keys": [{"kty": "oct", "kid": "k", "k": "c2VjcmV0"}]}).encode()


@pytest.mark.parametrize(
    ("encoding", "encoded"),
    [
        ("gzip", gzip.compress(KEYS)),
        ("deflate", zlib.compress(KEYS)),
        ("deflate", zlib.compress(KEYS, wbits=-zlib.MAX_WBITS)),  # raw, as some servers send
    ],
    ids=["gzip", "deflate", "raw deflate"],
)
def test_an_answer_compressed_though_not_asked_is_read(encoding: str, encoded: bytes) -> None:
    with served_handler(encoded_answer(encoded, encoding)) as server:
        keys = asyncio.run(_client(server).fetch_jwk_set())
    assert keys["keys"][0]["kid"] == "k"


def test_a_compressed_answer_is_capped_at_what_it_inflates_to() -> None:
    """64 MB of spaces, 64 KB gzipped: refused once a megabyte is inflated, not read whole."""
    bomb = gzip.compress(b" " * HUGE, compresslevel=9)
    assert len(bomb) < 100 * 1024
    with (
        served_handler(encoded_answer(bomb, "gzip")) as server,
        pytest.raises(AnswerTooLargeError),
    ):
        asyncio.run(_client(server).fetch_jwk_set())


def test_an_answer_in_another_encoding_is_refused() -> None:
    with (
        served_handler(encoded_answer(b"\x00" * 64, "br")) as server,
        pytest.raises(httpx2.DecodingError, match="not asked for"),
    ):
        asyncio.run(_client(server).fetch_jwk_set())
