"""Slack's v0 signing: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}`, ±300 s.

The HMAC is taken over the raw bytes, as they arrived: a correctly signed body that is not
UTF-8 passes here and is refused as malformed (400) when it is parsed, never as unsigned.
https://docs.slack.dev/authentication/verifying-requests-from-slack
"""

from __future__ import annotations

from resolver.contract.inbound import Headers, SignatureError
from resolver.contract.signatures import check_window, hmac_sha256_hex, parse_timestamp, same

REPLAY_WINDOW = 300.0  # seconds, as Slack's docs and slack_sdk's verifier use


def verify_request(headers: Headers, body: bytes, secret: str, now: float) -> None:
    """Raise SignatureError unless the request is signed by Slack within the last 5 minutes."""
    timestamp = headers.get("x-slack-request-timestamp")
    signature = headers.get("x-slack-signature")
    if not timestamp or not signature or not signature.startswith("v0="):
        raise SignatureError("missing Slack timestamp or v0 signature")
    check_window(parse_timestamp(timestamp), now, REPLAY_WINDOW)
    # Header values arrive latin-1 decoded; re-encoding gives the exact bytes that were signed.
    signed = b"v0:" + timestamp.encode("latin-1") + b":" + body
    if not same(hmac_sha256_hex(secret, signed), signature.removeprefix("v0=")):
        raise SignatureError("Slack signature mismatch")
