"""Signed, expiring links with which an unlinked sender links their own account. A link names
only the identity it was made for (provider, external id, login) and whether it was delivered
privately (a Slack ephemeral message, which only that person sees); opening it proves nothing
by itself: the web app asks the person to prove that identity first, unless it came privately.
A link links once: the web app records its use (`store.used_links`, under `LinkClaim.once`)."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from resolver.core.settings import Settings

SALT: Final = "resolver account link"


class LinkError(Exception):
    """The link is not one of ours, or it has expired."""


@dataclass(frozen=True)
class LinkClaim:
    provider: str
    external_id: str
    login: str | None
    private: bool = False
    """Delivered where only that person could read it: holding it is the proof."""
    once: str = field(default="", compare=False)
    """Its one-time key: what it says and when it was signed (not its text, which has other
    spellings), and its nonce."""
    expires_at: datetime = field(default=datetime.max.replace(tzinfo=UTC), compare=False)

    @property
    def account(self) -> str:
        """The account as people are told of it: `@login`, else its id."""
        return f"@{self.login}" if self.login else self.external_id


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.fernet_keys[0], salt=SALT)


def link_url(
    settings: Settings,
    provider: str,
    external_id: str,
    login: str | None,
    *,
    private: bool = False,
) -> str:
    data: dict[str, object] = {
        "p": provider,
        "id": external_id,
        "l": login,
        "n": secrets.token_urlsafe(8),
    }
    if private:
        data["v"] = 1
    token = _serializer(settings).dumps(data)
    return f"{settings.public_url.rstrip('/')}/link/{token}"


def read_link(settings: Settings, token: str) -> LinkClaim:
    max_age = int(settings.link_hours * 3600)
    try:
        data, signed_at = _serializer(settings).loads(token, max_age=max_age, return_timestamp=True)
    except SignatureExpired:
        raise LinkError("This link has expired; mention me again for a new one.") from None
    except BadSignature:
        raise LinkError("This is not a link Resolver made.") from None
    login = data.get("l")
    private = data.get("v") == 1
    # Links made before they carried a nonce are told apart by their signing time.
    said = json.dumps([data, int(signed_at.timestamp())], sort_keys=True)
    once = "link:" + hashlib.sha256(said.encode()).hexdigest()
    expires = signed_at.astimezone(UTC) + timedelta(seconds=max_age + 1)
    return LinkClaim(
        str(data["p"]),
        str(data["id"]),
        str(login) if login else None,
        private,
        once=once,
        expires_at=expires,
    )
