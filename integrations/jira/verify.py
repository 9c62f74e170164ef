"""Jira admin webhooks with a secret send `X-Hub-Signature: sha256=<hex>` (WebSub style; note
the header is not `-256`). Jira has no timestamp header: duplicates are stopped by the
`X-Atlassian-Webhook-Identifier` deduplication instead.
https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks
"""

from __future__ import annotations

from resolver.contract.inbound import Headers
from resolver.contract.signatures import check_hex_signature


def verify_signature(headers: Headers, body: bytes, secret: str) -> None:
    """Raise SignatureError unless the body carries Jira's SHA-256 signature."""
    check_hex_signature(headers.get("x-hub-signature"), "sha256=", secret, body)
