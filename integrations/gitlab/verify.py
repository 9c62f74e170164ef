"""GitLab authenticates a delivery with a shared token, or (GitLab 18+, behind a flag) with a
Standard Webhooks signature. A signature that is present is verified whenever a signing token
is configured, and a bad one is refused whatever the token says; a delivery without one falls
back to the token.

https://docs.gitlab.com/user/project/integrations/webhooks/ and https://www.standardwebhooks.com/
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from resolver.contract.inbound import Headers, SignatureError
from resolver.contract.signatures import check_window, parse_timestamp, same

REPLAY_WINDOW = 300.0  # seconds, the Standard Webhooks default


def verify_delivery(
    headers: Headers, body: bytes, token: str | None, signing_secret: str | None, now: float
) -> None:
    """Accept the delivery if its signature checks out, or (without one) its token; else
    SignatureError."""
    if signing_secret is not None and "webhook-signature" in headers:
        # A configured signing key means something: a wrong or stale signature is refused
        # even when the token would match (webhooks.md §2.3).
        return check_standard_signature(headers, body, signing_secret, now)
    given = headers.get("x-gitlab-token")
    if token is not None and given is not None and same(token, given):
        return None
    raise SignatureError("no configured GitLab credential matches")


def check_standard_signature(headers: Headers, body: bytes, secret: str, now: float) -> None:
    """`webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, any of many."""
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
    check_window(parse_timestamp(timestamp), now, REPLAY_WINDOW)
    # Header values arrive latin-1 decoded; re-encoding gives the exact bytes that were signed.
    signed = b".".join([msg_id.encode("latin-1"), timestamp.encode("latin-1"), body])
    expected = base64.b64encode(hmac.new(signing_key(secret), signed, hashlib.sha256).digest())
    for entry in signatures.split(" "):
        version, _, signature = entry.partition(",")
        if version == "v1" and same(expected.decode(), signature):
            return
    raise SignatureError("no matching v1 signature")


def signing_key(secret: str) -> bytes:
    """The HMAC key of a `whsec_<base64>` secret."""
    encoded = secret.removeprefix("whsec_")
    try:
        return base64.b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError) as error:
        raise SignatureError("the configured signing token is not whsec_<base64>") from error
