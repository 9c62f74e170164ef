"""Sixth signs a delivery: `X-Sixth-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, and
stamps it: `X-Sixth-Timestamp` (Unix seconds), signed too, within five minutes of now."""

from __future__ import annotations

from typing import Final

from resolver.contract.inbound import Headers
from resolver.contract.signatures import check_hex_signature, check_window, parse_timestamp

REPLAY_WINDOW: Final = 300.0  # seconds


def signed_message(timestamp: str, body: bytes) -> bytes:
    """What the signature covers: the timestamp, a dot, the body."""
    return timestamp.encode() + b"." + body


def verify_signature(headers: Headers, body: bytes, secret: str, now: float) -> None:
    """Raise SignatureError unless the body is signed with `secret` and recent."""
    stamp = headers.get("x-sixth-timestamp", "")
    check_hex_signature(
        headers.get("x-sixth-signature"), "sha256=", secret, signed_message(stamp, body)
    )
    check_window(parse_timestamp(stamp), now, REPLAY_WINDOW)
