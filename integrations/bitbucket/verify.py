"""Bitbucket's webhook signature: `X-Hub-Signature: sha256=<hex>`, HMAC-SHA256 of the raw body
with the webhook's secret, as both Bitbucket Cloud and Data Center send it. There is no
timestamp: a replay is stopped by the request id (`X-Request-UUID`, `X-Request-Id`).
https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/ (secure webhooks) and
https://confluence.atlassian.com/bitbucketserver/manage-webhooks-938025878.html (webhook secrets)
"""

from __future__ import annotations

from typing import Final

from resolver.contract.inbound import Headers, SignatureError
from resolver.contract.signatures import check_hex_signature

SIGNATURE_HEADER: Final = "x-hub-signature"
PREFIX: Final = "sha256="


def verify_signature(headers: Headers, body: bytes, secret: str | None, *, unsigned: bool) -> None:
    """Raise SignatureError unless the body carries the secret's signature. Without a secret,
    only an operator's explicit `unsigned` lets a delivery in; with one, a signature is always
    required (an unsigned delivery never passes because `unsigned` is on)."""
    if secret is None:
        if not unsigned:
            raise SignatureError("no Bitbucket webhook secret configured")
        return
    check_hex_signature(headers.get(SIGNATURE_HEADER), PREFIX, secret, body)
