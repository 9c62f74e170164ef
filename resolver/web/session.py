"""The signed session cookie: who signed in (their forge token sealed by the vault), the key of
their server-side session (`store.web_sessions`), without whose row the cookie opens nothing,
and the CSRF token every form carries back."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request

from resolver.contract.signin import IssuedToken, Person
from resolver.core.logs import unmasked_token
from resolver.core.settings import Settings
from resolver.store import web_sessions
from resolver.store.vault import Vault, VaultError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

COOKIE = "resolver_session"


def middleware_options(settings: Settings) -> dict[str, Any]:
    """Starlette's SessionMiddleware: signed (never readable as a token), HttpOnly, SameSite=Lax
    (the OAuth redirect back is a top-level GET), Secure whenever the public URL is https."""
    return {
        "secret_key": session_secret(settings),
        "session_cookie": COOKIE,
        "max_age": int(settings.session_hours * 3600),
        "same_site": "lax",
        "https_only": urlsplit(settings.public_url).scheme == "https",
    }


def session_secret(settings: Settings) -> str:
    """Derived from the vault's newest key, so there is no second secret to keep; rotating the
    key signs everyone out."""
    key = settings.fernet_keys[0].encode()
    return hmac.new(key, b"resolver web session", hashlib.sha256).hexdigest()


def lifetimes(settings: Settings) -> web_sessions.Lifetimes:
    return web_sessions.Lifetimes(
        absolute=timedelta(hours=settings.session_hours),
        idle=timedelta(minutes=settings.session_idle_minutes),
    )


@dataclass(frozen=True)
class SignedIn:
    person: Person
    token: str
    key: str
    """Of the server-side session: `store.web_sessions`."""


def session_key(request: Request) -> str | None:
    """The key of this browser's server-side session, as its cookie says."""
    key = request.session.get("sid")
    return key if isinstance(key, str) else None


def open_session(
    db: Session, person: Person, replacing: str | None, settings: Settings, now: datetime
) -> str:
    """A new server-side session for `person`, for `sign_in`; the browser's old one
    (`replacing`) ends: the key rotates at every sign-in, so one planted before opens nothing."""
    if replacing is not None:
        web_sessions.end(db, replacing)
    web_sessions.sweep(db, now, lifetimes(settings))  # sign-ins are rare; abandoned rows go
    return web_sessions.open_session(db, person.provider, person.external_id, now)


def sign_in(request: Request, person: Person, token: str, key: str, settings: Settings) -> None:
    """The cookie of the session `open_session` opened: the old one (and its CSRF token) is
    dropped."""
    request.session.clear()
    request.session["who"] = {"p": person.provider, "id": person.external_id, "l": person.login}
    request.session["tok"] = Vault(settings.fernet_keys).encrypt(token)
    request.session["sid"] = key
    request.session["csrf"] = unmasked_token()


def rekey(request: Request, key: str) -> None:
    """The session's key rotated (`web_sessions.rotate`): so does its CSRF token."""
    request.session["sid"] = key
    request.session["csrf"] = unmasked_token()


def signed_in(request: Request, settings: Settings) -> SignedIn | None:
    """Who the cookie says signed in; None when nobody did or the sealed token does not open.
    Whether their session still lives is the store's to say."""
    who, sealed, key = request.session.get("who"), request.session.get("tok"), session_key(request)
    if not isinstance(who, dict) or not isinstance(sealed, str) or key is None:
        return None
    try:
        token = Vault(settings.fernet_keys).decrypt(sealed).reveal()
        person = Person(str(who["p"]), str(who["id"]), str(who["l"]))
    except (VaultError, KeyError):
        return None
    return SignedIn(person, token, key)


def keep_grant(request: Request, issued: IssuedToken, settings: Settings) -> None:
    """The tokens of someone not linked yet, sealed, until they link (`take_grant`)."""
    grant = {**asdict(issued), "at": datetime.now(UTC).isoformat()}
    request.session["grant"] = Vault(settings.fernet_keys).encrypt(json.dumps(grant))


def take_grant(request: Request, settings: Settings) -> tuple[IssuedToken, datetime] | None:
    """The tokens `keep_grant` kept, and when they were issued; once."""
    sealed = request.session.pop("grant", None)
    if not isinstance(sealed, str):
        return None
    try:
        grant = json.loads(Vault(settings.fernet_keys).decrypt(sealed).reveal())
        at = datetime.fromisoformat(grant.pop("at"))
        return IssuedToken(**grant), at
    except (VaultError, ValueError, TypeError, KeyError):
        return None


def csrf_token(request: Request) -> str:
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = unmasked_token()
        request.session["csrf"] = token
    return token


def csrf_ok(request: Request, submitted: object) -> bool:
    expected = request.session.get("csrf")
    if not isinstance(expected, str) or not isinstance(submitted, str):
        return False
    return hmac.compare_digest(expected.encode(), submitted.encode())


def safe_next(target: object) -> str:
    """Where to go after signing in: a path on this site only."""
    if not isinstance(target, str) or not target.startswith("/") or target.startswith("//"):
        return "/jobs"
    return "/jobs" if "\\" in target else target
