"""Logging: stable dotted event keys with fields, and every known secret masked."""

from __future__ import annotations

import json
import logging
import sys
import threading
from typing import Any

from resolver.core.redact import Redactor

_known: set[str] = set()
_lock = threading.Lock()
_redactor = Redactor()


def register_secret(value: str) -> None:
    """Mask `value` in every log line this process writes from now on."""
    global _redactor
    with _lock:
        if value in _known:
            return
        _known.add(value)
        _redactor = Redactor(_known)


def redact(text: str) -> str:
    return _redactor(text)


def redact_value(value: object) -> object:
    """Every string inside a JSON-like value, masked as `redact` masks one."""
    return _redactor.redact_value(value)


class RedactingFormatter(logging.Formatter):
    """Formats `key field=value …` (or JSON) and masks secrets in the finished line."""

    def __init__(self, as_json: bool) -> None:
        super().__init__()
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = getattr(record, "fields", {})
        message = record.getMessage()
        if self.as_json:
            data = {"level": record.levelname, "logger": record.name, "event": message, **fields}
            if record.exc_info:
                data["exc"] = self.formatException(record.exc_info)
            line = json.dumps(data, default=str)
        else:
            extras = " ".join(f"{k}={v}" for k, v in fields.items())
            line = f"{self.formatTime(record)} {record.levelname:<7} {message} {extras}".rstrip()
            if record.exc_info:
                line += "\n" + self.formatException(record.exc_info)
        return redact(line)


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
    # Third-party loggers that may print request bodies or headers at DEBUG.
    for noisy in ("httpx", "httpcore", "urllib3", "LiteLLM", "docker"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def log(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    """Log a stable event key with context fields: `log(l, INFO, "job.started", job=3)`."""
    logger.log(level, event, extra={"fields": fields})
