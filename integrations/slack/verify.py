"""Slack's v0 signing: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}`, ±300 s.

slack_sdk's verifier raises on a non-integer timestamp, a non-UTF-8 body or a non-ASCII
signature instead of answering False; those are the sender's mistakes, so they become 401s.
https://docs.slack.dev/authentication/verifying-requests-from-slack
"""

from __future__ import annotations

from slack_sdk.signature import Clock, SignatureVerifier

from resolver.triggers import Headers, SignatureError


class _At(Clock):
    """A clock stopped at the time the request arrived (tests pass their own)."""

    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def verify_request(headers: Headers, body: bytes, secret: str, now: float) -> None:
    """Raise SignatureError unless the request is signed by Slack within the last 5 minutes."""
    timestamp = headers.get("x-slack-request-timestamp")
    signature = headers.get("x-slack-signature")
    if not timestamp or not signature or not signature.startswith("v0="):
        raise SignatureError("missing Slack timestamp or v0 signature")
    try:
        valid = SignatureVerifier(secret, clock=_At(now)).is_valid(body, timestamp, signature)
    except (ValueError, TypeError, UnicodeDecodeError) as error:
        raise SignatureError("unverifiable Slack signature headers") from error
    if not valid:
        raise SignatureError("Slack signature mismatch or stale timestamp")
