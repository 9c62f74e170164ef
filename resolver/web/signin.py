"""Sign in with a forge (the OAuth 2.0 web flow, through Authlib's Starlette client), and sign
out. The session then holds who signed in and their token, sealed by the vault."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.contract.signin import (
    ForgeUnreachableError,
    IssuedToken,
    OAuthClient,
    Person,
    SignInError,
    issued_token,
)
from resolver.core.logs import log, register_secret
from resolver.core.settings import Settings
from resolver.store import accounts, web_sessions
from resolver.store.models import utcnow
from resolver.store.secrets import save_oauth_token
from resolver.store.vault import Vault
from resolver.web.actions import checked_viewer
from resolver.web.context import end_everywhere, in_transaction, not_found, page, web_of
from resolver.web.oauth_http import CappedOAuth
from resolver.web.proofs import REFUSED, exchanged
from resolver.web.session import (
    csrf_ok,
    keep_grant,
    open_session,
    safe_next,
    session_key,
    sign_in,
)

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


Clients = Callable[[Settings], list[tuple[str, OAuthClient]]]


def sign_in_clients(settings: Settings) -> list[tuple[str, OAuthClient]]:
    """The OAuth client of each forge whose sign-in is configured."""
    found = []
    for forge in registry.sign_ins(settings):
        assert forge.sign_in is not None
        client = forge.sign_in.client(settings)
        assert client is not None
        found.append((forge.name, client))
    return found


class OAuthClients:
    """Authlib's registry of some OAuth clients, built again when their settings change
    (`/setup` creates the GitHub App, and with it its client, while the app runs)."""

    def __init__(self, clients: Clients, settings: Settings) -> None:
        self._clients = clients
        self._lock = threading.Lock()
        self._built = clients(settings)
        self._oauth = build_oauth(self._built)

    def create_client(self, name: str, settings: Settings) -> Any:
        wanted = self._clients(settings)
        with self._lock:
            if wanted != self._built:
                self._built, self._oauth = wanted, build_oauth(wanted)
            return self._oauth.create_client(name)


def build_oauth(clients: list[tuple[str, OAuthClient]]) -> CappedOAuth:
    oauth = CappedOAuth()
    for name, client in clients:
        register(oauth, name, client)
    return oauth


def register(oauth: CappedOAuth, name: str, client: OAuthClient) -> None:
    """`client` as an Authlib client named `name`; with an issuer, ID tokens are checked
    against its keys (OpenID Connect)."""
    kwargs: dict[str, str] = {"scope": client.scope} if client.scope else {}
    if client.secret_in_body:
        kwargs["token_endpoint_auth_method"] = "client_secret_post"
    metadata = {"issuer": client.issuer, "jwks_uri": client.jwks_url} if client.jwks_url else {}
    oauth.register(
        name,
        client_id=client.client_id,
        client_secret=client.client_secret,
        authorize_url=client.authorize_url,
        access_token_url=client.access_token_url,
        authorize_params=dict(client.authorize_params) or None,
        client_kwargs=kwargs,
        **metadata,
    )


async def signin_page(request: Request) -> Response:
    settings = web_of(request).settings
    forges = registry.sign_ins(settings)
    target = safe_next(request.query_params.get("next"))
    return page(request, "signin.html", None, forges=forges, next=target)


def _callback_url(settings: Settings, name: str) -> str:
    return f"{settings.public_url.rstrip('/')}/signin/{name}/done"


async def start(request: Request) -> Response:
    web = web_of(request)
    name = request.path_params["forge"]
    client = request.app.state.oauth.create_client(name, web.settings)
    if client is None:
        return not_found(request, None)
    request.session["next"] = safe_next(request.query_params.get("next"))
    redirect: Response = await client.authorize_redirect(request, _callback_url(web.settings, name))
    return redirect


async def done(request: Request) -> Response:
    """The forge sends the person back with a code; exchange it and learn who they are."""
    web = web_of(request)
    name = request.path_params["forge"]
    client = request.app.state.oauth.create_client(name, web.settings)
    forge = registry.find(name)
    if client is None or forge is None or forge.sign_in is None:
        return not_found(request, None)
    try:
        token = await exchanged(client, request)
        issued = issued_token(token)
        access_token = issued.access_token
        register_secret(access_token, passing=True)
        person = await run_in_threadpool(forge.sign_in.person, web.settings, access_token)
    except (*REFUSED, SignInError, ForgeUnreachableError) as error:
        log(logger, logging.WARNING, "web.signin_failed", forge=name, error=type(error).__name__)
        problem = f"{forge.display_name} did not complete the sign-in; please try again."
        return page(
            request,
            "signin.html",
            None,
            status_code=400,
            problem=problem,
            forges=registry.sign_ins(web.settings),
            next="/jobs",
        )
    target = safe_next(request.session.get("next"))
    old = session_key(request)
    linked, key = await in_transaction(remember, web.settings, person, issued, old)
    sign_in(request, person, access_token, key, web.settings)
    if not linked:
        keep_grant(request, issued, web.settings)  # stored if they link in this session
    log(logger, logging.INFO, "web.signed_in", forge=name, login=person.login, linked=linked)
    return RedirectResponse(target, status_code=303)


def remember(
    session: Session, settings: Settings, person: Person, issued: IssuedToken, replacing: str | None
) -> tuple[bool, str]:
    """Open the person's server-side session (its key), and keep a linked person's fresh token
    as their stored one (replacing a refused one), and when they signed in; the flag is False
    when the account is not linked to anyone."""
    key = open_session(session, person, replacing, settings, utcnow())
    identity = accounts.signed_in(session, person.provider, person.external_id)
    if identity is None:
        return False, key
    vault = Vault(settings.fernet_keys)
    save_oauth_token(session, vault, person.provider, identity.user_id, issued)
    return True, key


async def signout(request: Request) -> Response:
    """This session ends, on the server too: a copy of its cookie opens nothing after."""
    form = await request.form()
    if not csrf_ok(request, form.get("csrf")):
        return Response("The form expired; reload the page and try again.", status_code=403)
    key = session_key(request)
    if key is not None:
        await in_transaction(_end, key)
    request.session.clear()
    return RedirectResponse("/signin", status_code=303)


def _end(session: Session, key: str) -> None:
    web_sessions.end(session, key)


async def signout_everywhere(request: Request) -> Response:
    """`POST /me/signout-everywhere`: every session of the viewer ends, this one with them."""
    viewer = await checked_viewer(request)
    if isinstance(viewer, Response):
        return viewer
    await end_everywhere(viewer.person)
    log(logger, logging.INFO, "web.signed_out_everywhere", login=viewer.person.login)
    request.session.clear()
    request.session["flash"] = "You are signed out everywhere."
    return RedirectResponse("/signin", status_code=303)
