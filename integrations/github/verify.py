"""GitHub's `X-Hub-Signature-256`: HMAC-SHA256 of the raw body, `sha256=` and lowercase hex.

The legacy SHA-1 `X-Hub-Signature` header is never looked at. GitHub has no timestamp, so
replays are stopped by delivery-id deduplication instead.
https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
"""

from __future__ import annotations

from resolver.contract.inbound import Headers
from resolver.contract.signatures import check_hex_signature


def verify_signature(headers: Headers, body: bytes, secret: str) -> None:
    """Raise SignatureError unless the body carries GitHub's SHA-256 signature."""
    check_hex_signature(headers.get("x-hub-signature-256"), "sha256=", secret, body)
