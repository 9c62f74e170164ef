"""How people sign in to the web app with a forge, and what the forge says they may do; and how
they prove an account on a chat or tracker. Each provider that offers one describes it once
(`Provider.sign_in`, `Provider.proof`); `resolver.web` drives the OAuth 2.0 web flow with
Authlib and asks these functions the rest. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from resolver.core.settings import Settings


class SignInError(Exception):
    """The forge refused the viewer's token (revoked or expired): sign in again."""


class ForgeUnreachableError(Exception):
    """The forge did not answer a viewer's question; nothing may be concluded from it."""


class RefreshRefusedError(Exception):
    """The forge refused a refresh token (the person revoked the app, or it was used or
    expired): only signing in again gives a new one."""


@dataclass(frozen=True)
class IssuedToken:
    """What a forge's token endpoint issued: the access token, and, when it expires, how long
    it lasts and the refresh token that renews it (seconds; None: no end)."""

    access_token: str
    expires_in: int | None = None
    refresh_token: str | None = None
    refresh_expires_in: int | None = None

    def __repr__(self) -> str:
        return f"IssuedToken(<hidden>, expires_in={self.expires_in})"


def issued_token(answer: Mapping[str, object]) -> IssuedToken:
    """An OAuth 2.0 token answer (RFC 6749 section 5.1, plus GitHub's
    `refresh_token_expires_in`) as an IssuedToken; KeyError without an access token."""

    def seconds(name: str) -> int | None:
        value = answer.get(name)
        return int(value) if isinstance(value, int | str) and str(value).isdigit() else None

    token, refresh = answer.get("access_token"), answer.get("refresh_token")
    if not isinstance(token, str) or not token:  # `null` is no token (it was stored as "None")
        raise KeyError("access_token")
    return IssuedToken(
        access_token=token,
        expires_in=seconds("expires_in"),
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        refresh_expires_in=seconds("refresh_token_expires_in"),
    )


@dataclass(frozen=True)
class OAuthClient:
    """An OAuth 2.0 client of the forge, as Authlib registers it."""

    client_id: str
    client_secret: str
    authorize_url: str
    access_token_url: str
    scope: str
    authorize_params: dict[str, str] = field(default_factory=dict)
    """Sent with the authorize request besides the standard ones (Atlassian's `audience`)."""
    secret_in_body: bool = False
    """The token request carries the secret as a form field, not as HTTP Basic."""
    issuer: str = ""
    """For OpenID Connect: the ID token's issuer, whose keys are at `jwks_url`."""
    jwks_url: str = ""


@dataclass(frozen=True)
class Person:
    """Who signed in, as the forge knows them."""

    provider: str
    external_id: str
    login: str


@dataclass(frozen=True)
class RepoAccess:
    read: bool
    push: bool


NO_ACCESS = RepoAccess(read=False, push=False)


@dataclass(frozen=True)
class SignIn:
    """A forge's sign-in: its OAuth client (None when not configured), who a token belongs to,
    what that token may do on a repository (`owner/name`), and a refresh token traded for new
    tokens (RefreshRefusedError when the forge refuses it)."""

    client: Callable[[Settings], OAuthClient | None]
    person: Callable[[Settings, str], Person]
    access: Callable[[Settings, str, str], RepoAccess]
    refresh: Callable[[Settings, str], IssuedToken]
    client_settings: tuple[str, ...] = ()
    """The settings its OAuth client is made of (`resolver doctor` names them)."""


@dataclass(frozen=True)
class IdentityProof:
    """How a person proves they hold an account on a chat or tracker: its OAuth client (None
    when not configured), and the account a token belongs to, named by the external id the
    provider's notices use."""

    client: Callable[[Settings], OAuthClient | None]
    whoami: Callable[[Settings, str], Person]
    client_settings: tuple[str, ...] = ()
    """The settings its OAuth client is made of (`resolver doctor` names them)."""


def sign_in_again(display_name: str, settings: Settings) -> str:
    """What a person is told when the forge refused their stored token."""
    url = f"{settings.public_url.rstrip('/')}/signin?next=/me"
    return (
        f"your {display_name} authorization was revoked or has expired; sign in again at "
        f"{url} to renew it"
    )
