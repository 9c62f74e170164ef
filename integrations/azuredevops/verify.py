"""Azure DevOps service hooks do not sign their deliveries. A Web Hooks subscription sends
the basic-auth credentials and the HTTP headers it was created with, so a delivery must carry
both: `Authorization: Basic` with the generated password, and `X-Resolver-Secret`. Both are
compared in constant time, and both must match; a missing one fails closed. Basic auth is
only safe over HTTPS, which the set-up enforces for the hook's URL.
https://learn.microsoft.com/azure/devops/service-hooks/services/webhooks
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import Final

from resolver.contract.inbound import Headers, SignatureError

SECRET_HEADER: Final = "x-resolver-secret"


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """`Basic base64(user:password)` → (user, password), or None."""
    scheme, _, value = (header or "").partition(" ")
    if scheme.lower() != "basic" or not value.strip():
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


def verify_delivery(headers: Headers, user: str, password: str, header_secret: str) -> None:
    """Raise SignatureError unless the delivery carries the hook's user, password and header."""
    found = basic_credentials(headers.get("authorization"))
    if found is None:
        raise SignatureError("no basic-auth credentials")
    user_ok = _same(found[0], user)
    password_ok = _same(found[1], password)
    header_ok = _same(headers.get(SECRET_HEADER, ""), header_secret)
    if not (user_ok and password_ok and header_ok):
        raise SignatureError("bad basic-auth credentials or secret header")
