"""The operator's way in before anyone can sign in: `resolver setup url` prints a signed link,
good for `OPERATOR_LINK_SECONDS`, that opens the web app as an admin so that `/setup` can create
the GitHub App (and with it, sign-in for everyone else). Printing it needs the vault's key, so
only someone who can run `resolver` on the host has it. It opens one session: the web app
records its use (`store.used_links`, under `OperatorLink.once`) and refuses it after."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from resolver.core.settings import Settings

OPERATOR: Final = "operator"
"""The `Person.provider` of a session opened with the operator's link; such a viewer is an
admin and nobody else."""
OPERATOR_LINK_SECONDS: Final = 3600
SALT: Final = "resolver operator setup"


class OperatorLinkError(Exception):
    """The link is not one `resolver setup url` printed, or it has expired."""


USED: Final = "This setup link was used already; print a new one with `resolver setup url`."


@dataclass(frozen=True)
class OperatorLink:
    once: str
    """Its one-time key: its random nonce, not its text (which has other spellings)."""
    expires_at: datetime


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.fernet_keys[0], salt=SALT)


def operator_url(settings: Settings) -> str:
    token = _serializer(settings).dumps({"n": secrets.token_urlsafe(8)})
    return f"{settings.public_url.rstrip('/')}/setup/start/{token}"


def read_operator_token(settings: Settings, token: str) -> OperatorLink:
    try:
        data, signed_at = _serializer(settings).loads(
            token, max_age=OPERATOR_LINK_SECONDS, return_timestamp=True
        )
    except SignatureExpired:
        raise OperatorLinkError(
            "This setup link has expired; print a new one with `resolver setup url`."
        ) from None
    except BadSignature:
        raise OperatorLinkError("This is not a setup link `resolver setup url` printed.") from None
    nonce = data.get("n") if isinstance(data, dict) else None
    if not isinstance(nonce, str):
        raise OperatorLinkError("This is not a setup link `resolver setup url` printed.")
    expires = signed_at.astimezone(UTC) + timedelta(seconds=OPERATOR_LINK_SECONDS + 1)
    return OperatorLink(f"operator:{nonce}", expires)
