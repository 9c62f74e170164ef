"""HMAC checks shared by the integrations. Pure; every failure is a SignatureError."""

from __future__ import annotations

import hashlib
import hmac
import math

from resolver.contract.inbound import SignatureError


def hmac_sha256_hex(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def same(expected: str, given: str) -> bool:
    """Constant-time equality that never raises (header values may hold any character)."""
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def check_hex_signature(header: str | None, prefix: str, secret: str, body: bytes) -> None:
    """Require `<prefix><hex HMAC-SHA256 of body>` exactly; no other algorithm is tried."""
    if header is None or not header.startswith(prefix):
        raise SignatureError(f"missing or unprefixed signature (want {prefix!r})")
    if not same(hmac_sha256_hex(secret, body), header[len(prefix) :]):
        raise SignatureError("signature mismatch")


def parse_timestamp(value: object, scale: float = 1.0) -> float:
    """A finite number (or an integer string) as seconds; `scale` converts from ms."""
    if isinstance(value, str) and value.isascii() and value.strip().isdigit():
        value = value.strip()
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise SignatureError("timestamp is not a number")
    try:
        seconds = float(value) / scale
    except (ValueError, OverflowError) as error:  # over 4300 digits, or beyond a float
        raise SignatureError("timestamp out of range") from error
    if not math.isfinite(seconds):
        raise SignatureError("timestamp is not finite")
    return seconds


def check_window(timestamp: float, now: float, window: float) -> None:
    """Reject a timestamp more than `window` seconds away from now, either way."""
    if abs(now - timestamp) > window:
        raise SignatureError("timestamp outside the replay window")
