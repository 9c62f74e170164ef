"""Logging: stable dotted event keys with fields, and every known secret masked."""

from __future__ import annotations

import json
import logging
import secrets
import sys
import threading
from collections import OrderedDict
from typing import Any, Final

from resolver.core.redact import Redactor

PASSING_MAX: Final = 512
"""How many people's tokens (`passing=True`) a process masks by value at once, the most
recently seen: each sign-in, refresh or job adds one, and masking a set that only grew would
cost each new one more (rebuilding the mask took a third of a second at 6,000)."""

_known: set[str] = set()
_passing: OrderedDict[str, None] = OrderedDict()
_lock = threading.Lock()
_redactor = Redactor()


def register_secret(value: str, *, passing: bool = False) -> None:
    """Mask `value` in every log line this process writes from now on; a `passing` one (a
    person's token) for as long as it is among the `PASSING_MAX` most recently registered.
    Tokens of a known shape are masked by their shape as well, whether registered or not."""
    global _redactor
    with _lock:
        if value in _known:
            return
        if passing:
            if value in _passing:
                _passing.move_to_end(value)
                return
            _passing[value] = None
            while len(_passing) > PASSING_MAX:
                _passing.popitem(last=False)
        else:
            _known.add(value)
        _redactor = Redactor(_known | _passing.keys())


def forget_secrets() -> None:
    """Mask no value registered so far (token shapes still are): for a process that starts
    over under other settings, a test's, whose every settings object brings new keys."""
    global _redactor
    with _lock:
        _known.clear()
        _passing.clear()
        _redactor = Redactor()


def unmasked_token(nbytes: int = 32) -> str:
    """A random URL-safe token that no mask hides when a page prints it (one in thousands is
    shaped like an API key): a CSRF token, a secret to copy from a page."""
    while True:
        token = secrets.token_urlsafe(nbytes)
        if _redactor(token) == token:
            return token


def redact(text: str) -> str:
    return _redactor(text)


def redact_value(value: object) -> object:
    """Every string inside a JSON-like value, masked as `redact` masks one."""
    return _redactor.redact_value(value)


class RedactingFormatter(logging.Formatter):
    """Formats `key field=value …` (or JSON) with secrets masked in the message, each field and
    the traceback before they are written: JSON and `_one_line` escape a quote, a backslash, a
    non-ASCII letter or a newline (a PEM key), and a mask run over the finished line no longer
    matches the secret so re-spelled."""

    def __init__(self, as_json: bool) -> None:
        super().__init__()
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = getattr(record, "fields", {})
        message = redact(record.getMessage())
        trace = redact(self.formatException(record.exc_info)) if record.exc_info else ""
        if self.as_json:
            data: dict[str, object] = {"level": record.levelname, "logger": record.name}
            data["event"] = message
            data.update({key: _masked(value) for key, value in fields.items()})
            if trace:
                data["exc"] = trace
            return json.dumps(data, default=str)
        extras = " ".join(f"{k}={_one_line(_masked(v))}" for k, v in fields.items())
        line = f"{self.formatTime(record)} {record.levelname:<7} {message} {extras}".rstrip()
        return f"{line}\n{trace}" if trace else line


def _masked(value: object) -> object:
    """A field's value with every string in it masked (before JSON or `repr` escapes one); a
    number stays a number."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        return {redact(str(key)): _masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_masked(item) for item in value)
    return redact(str(value))


_CONTROLS: Final = {
    **{code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, 0x85]},
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def _one_line(value: object) -> str:
    """A field's value on the line it belongs to: a newline or another control character in
    it (a branch name, an id from a payload) is written escaped, so that no value can begin a
    line that looks like another event."""
    return str(value).translate(_CONTROLS)


def configure_logging(level: str = "INFO", fmt: str = "text") -> None:
    """Install the redacting formatter on the root logger (idempotent)."""
    root = logging.getLogger()
    root.setLevel(level.upper())
    for handler in root.handlers:
        if isinstance(handler.formatter, RedactingFormatter):
            return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter(as_json=fmt == "json"))
    root.handlers = [handler]
    # Third-party loggers that may print request bodies or headers at DEBUG, and every URL
    # called at INFO (httpx2 is Authlib's and the MCP client's).
    for noisy in ("httpx", "httpcore", "httpx2", "httpcore2", "urllib3", "LiteLLM", "docker"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def log(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    """Log a stable event key with context fields: `log(l, INFO, "job.started", job=3)`."""
    logger.log(level, event, extra={"fields": fields})
