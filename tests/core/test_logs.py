"""The process's mask of known secrets: a person's tokens are held to the most recent few
hundred, so that each sign-in costs the same however many came before. Pure."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler

import pytest

from resolver.core import logs
from tests.support.serving import served_handler


@pytest.fixture(autouse=True)
def fresh_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logs, "_known", set())
    monkeypatch.setattr(logs, "_passing", OrderedDict())
    monkeypatch.setattr(logs, "_redactor", logs.Redactor())


def test_a_persons_tokens_are_masked_while_they_are_among_the_most_recent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logs, "PASSING_MAX", 20)
    setting = "setting-" + secrets.token_hex(16)
    logs.register_secret(setting)
    tokens = ["person-" + secrets.token_hex(16) for _ in range(logs.PASSING_MAX + 10)]
    for token in tokens:
        logs.register_secret(token, passing=True)
    logs.register_secret(tokens[0], passing=True)  # seen again: the most recent once more
    line = logs.redact(" ".join([setting, *tokens[:12], tokens[-1]]))
    assert setting not in line and tokens[0] not in line and tokens[-1] not in line
    assert tokens[1] in line and tokens[10] in line  # the oldest, let go
    assert tokens[11] not in line
    assert len(logs._passing) == logs.PASSING_MAX


def test_a_minted_token_is_never_one_a_page_would_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    shaped = "AAAAAAAAAAAAsk-BBBBBBBBBBBBBBBBBBBBBBBBBBBB"
    assert logs.redact(shaped) != shaped
    minted = iter([shaped, "C" * 43])
    monkeypatch.setattr(logs.secrets, "token_urlsafe", lambda _n: next(minted))
    assert logs.unmasked_token() == "C" * 43


def test_a_field_from_a_payload_cannot_begin_a_line_of_its_own() -> None:
    """A branch name with a newline in it would otherwise forge an event of its own."""
    import logging

    record = logging.LogRecord("resolver", logging.INFO, __file__, 1, "webhook.push", None, None)
    record.fields = {"branch": "main\n2026-11-28 12:00:00 CRITICAL webhook.forged\r\x00x"}
    line = logs.RedactingFormatter(as_json=False).format(record)
    assert "\n" not in line and "\r" not in line and "\x00" not in line
    assert line.endswith("branch=main\\n2026-11-28 12:00:00 CRITICAL webhook.forged\\r\\x00x")


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeL\n"
    "-----END RSA PRIVATE KEY-----"
)
RESPELLED = [
    'whsec"Quote9Xk2LmP0',
    "whsec\\Back9Xk2LmP0",
    "whsecÜmlaut9Xk2LmP0",
    "pass\tWord9Xk",
    PEM,
]
"""Secrets JSON or a field's escaping writes otherwise than they are: a quote, a backslash, a
non-ASCII letter, a tab, and a PEM key's newlines."""


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("secret", RESPELLED, ids=["quote", "backslash", "umlaut", "tab", "pem"])
def test_a_secret_that_the_format_escapes_is_masked_in_message_fields_and_traceback(
    secret: str, as_json: bool
) -> None:
    import io
    import json
    import logging

    logs.register_secret(secret)
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(logs.RedactingFormatter(as_json=as_json))
    logger = logging.getLogger(f"tests.respelled.{as_json}")
    logger.handlers, logger.propagate = [handler], False
    logs.log(logger, logging.WARNING, "probe.field", value=secret, nested={"values": [secret]})
    try:
        raise ValueError(f"bad credential {secret}")
    except ValueError:
        logger.exception("probe.failed %s", secret)
    lines = written.getvalue()
    assert "******" in lines
    for spelled in (secret, json.dumps(secret)[1:-1], logs._one_line(secret)):
        assert spelled not in lines
    assert "ValueError: bad credential" in lines


class _Answers(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.mark.parametrize("library", ["httpx", "httpx2"])
def test_an_http_librarys_request_lines_are_not_logged_at_info(
    library: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """httpx2 (Authlib's, the MCP client's) logs each URL it calls at INFO, as httpx does."""
    import importlib
    import logging

    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    monkeypatch.setattr(root, "level", root.level)
    for name in ("httpx", "httpcore", "httpx2", "httpcore2"):
        monkeypatch.setattr(logging.getLogger(name), "level", logging.NOTSET)
    logs.configure_logging("INFO")
    client = importlib.import_module(library)
    with served_handler(_Answers) as url:
        assert client.get(f"{url}/hook?code=secret-in-url").status_code == 200
    assert "secret-in-url" not in capsys.readouterr().err
