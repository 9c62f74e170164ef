"""Linear: `Linear-Signature` is the lowercase hex HMAC-SHA256 of the raw body, and the signed
body's `webhookTimestamp` (Unix ms) must be within 60 s, as @linear/sdk's verifier requires.
The unsigned `Linear-Timestamp` header is never trusted.
https://linear.app/developers/webhooks#securing-webhooks
"""

from __future__ import annotations

from resolver.contract.inbound import Headers, SignatureError, decode_object
from resolver.contract.signatures import check_hex_signature, check_window, parse_timestamp

REPLAY_WINDOW = 60.0  # seconds


def verify_signature(headers: Headers, body: bytes, secret: str, now: float) -> None:
    """Raise SignatureError unless the body is signed and was sent within the last minute."""
    check_hex_signature(headers.get("linear-signature"), "", secret, body)
    stamp = decode_object(body).get("webhookTimestamp")
    if isinstance(stamp, str):
        raise SignatureError("webhookTimestamp is not a number")
    check_window(parse_timestamp(stamp, scale=1000.0), now, REPLAY_WINDOW)
