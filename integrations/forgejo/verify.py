"""Forgejo's and Gitea's webhook signature: HMAC-SHA256 of the raw body, as bare lowercase hex.

Forgejo sends it in `X-Forgejo-Signature` and, for Gitea's receivers, the same value in
`X-Gitea-Signature`; Gitea sends only the latter. When the Forgejo header is present it alone is
checked: a bad one is not rescued by the other. The `X-Hub-Signature` (SHA-1) header Forgejo
also sends is never looked at. There is no timestamp: a replay is stopped by the delivery id.
Source: `AddDefaultHeaders` in Forgejo's services/webhook/shared/payloader.go.
"""

from __future__ import annotations

from typing import Final

from resolver.contract.inbound import Headers
from resolver.contract.signatures import check_hex_signature

SIGNATURE_HEADERS: Final = ("x-forgejo-signature", "x-gitea-signature")


def verify_signature(headers: Headers, body: bytes, secret: str) -> None:
    """Raise SignatureError unless the body carries Forgejo's (or Gitea's) signature."""
    header = next((headers[name] for name in SIGNATURE_HEADERS if name in headers), None)
    # A hook without a secret sends an empty signature, which never matches.
    check_hex_signature(header, "", secret, body)
