"""What the OAuth 2.0 authorization code stand-ins of Slack, Atlassian and Linear share: the
registered apps, who is signed in on the provider's site, the authorize requests in order, and
codes that are good once, for ten minutes, for the app and redirect_uri they were issued to.
Each provider's own paths, parameters and error documents are in its module.
https://www.rfc-editor.org/rfc/rfc6749#section-4.1
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

CODE_LIFETIME: Final = 600.0  # seconds
WhoT = TypeVar("WhoT")


@dataclass(frozen=True)
class Authorization(Generic[WhoT]):
    """An authorize request as the stand-in received it, and who was signed in (None: nobody)."""

    params: dict[str, str]
    signed_in: WhoT | None


@dataclass(frozen=True)
class Grant(Generic[WhoT]):
    """What a code stands for: a token acting as `who`, for the app it was issued to."""

    client_id: str
    redirect_uri: str
    scope: str
    who: WhoT
    issued_at: float
    nonce: str = ""  # OpenID Connect: put back in the ID token


@dataclass
class CodeFlow(Generic[WhoT]):
    """The apps (client id -> secret), who is signed in, the authorize requests and the codes
    not yet traded; `clock` ages the codes (a test may move it on)."""

    apps: dict[str, str] = field(default_factory=dict)
    signed_in: WhoT | None = None
    authorizations: list[Authorization[WhoT]] = field(default_factory=list)
    codes: dict[str, Grant[WhoT]] = field(default_factory=dict)
    clock: Callable[[], float] = time.time

    def approve(self, params: dict[str, str]) -> str | None:
        """Record the authorize request; a new code when someone is signed in to approve it."""
        self.authorizations.append(Authorization(dict(params), self.signed_in))
        if self.signed_in is None:
            return None
        code = secrets.token_urlsafe(24)
        client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
        scope = params.get("scope", "")
        nonce = params.get("nonce", "")
        grant = Grant(client_id, redirect_uri, scope, self.signed_in, self.clock(), nonce)
        self.codes[code] = grant
        return code

    def redeem(self, code: str, client_id: str, redirect_uri: str | None) -> Grant[WhoT] | None:
        """The code's grant, used up; None if unknown, used, expired, another client's, or sent
        with another redirect_uri."""
        grant = self.codes.pop(code, None)
        if grant is None or grant.client_id != client_id:
            return None
        if redirect_uri is not None and redirect_uri != grant.redirect_uri:
            return None
        return grant if self.clock() - grant.issued_at <= CODE_LIFETIME else None

    def client_ok(self, client_id: str, secret: str) -> bool:
        return bool(secret) and self.apps.get(client_id) == secret
