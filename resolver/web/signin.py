"""Sign in with a forge (the OAuth 2.0 web flow, through Authlib's Starlette client), and sign
out. The session then holds who signed in and their token, sealed by the vault."""

from __future__ import annotations

import logging

from authlib.integrations.starlette_client import OAuth, OAuthError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.contract.signin import ForgeUnreachableError, OAuthClient, SignInError
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.web.context import page, web_of
from resolver.web.session import csrf_ok, safe_next, sign_in

logger = logging.getLogger(__name__)


def build_oauth(settings: Settings) -> OAuth:
    """One Authlib client per forge whose sign-in is configured."""
    oauth = OAuth()
    for forge in registry.sign_ins(settings):
        assert forge.sign_in is not None
        client = forge.sign_in.client(settings)
        assert client is not None
        register(oauth, forge.name, client)
    return oauth


def register(oauth: OAuth, name: str, client: OAuthClient) -> None:
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
    client = request.app.state.oauth.create_client(name)
    if client is None:
        return await signin_page(request)
    request.session["next"] = safe_next(request.query_params.get("next"))
    redirect: Response = await client.authorize_redirect(request, _callback_url(web.settings, name))
    return redirect


async def done(request: Request) -> Response:
    """The forge sends the person back with a code; exchange it and learn who they are."""
    web = web_of(request)
    name = request.path_params["forge"]
    client = request.app.state.oauth.create_client(name)
    forge = registry.find(name)
    if client is None or forge is None or forge.sign_in is None:
        return await signin_page(request)
    try:
        token = await client.authorize_access_token(request)
        access_token = str(token["access_token"])
        person = await run_in_threadpool(forge.sign_in.person, web.settings, access_token)
    except (OAuthError, KeyError, SignInError, ForgeUnreachableError) as error:
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
    sign_in(request, person, access_token, web.settings)
    log(logger, logging.INFO, "web.signed_in", forge=name, login=person.login)
    return RedirectResponse(target, status_code=303)


async def signout(request: Request) -> Response:
    form = await request.form()
    if not csrf_ok(request, form.get("csrf")):
        return Response("The form expired; reload the page and try again.", status_code=403)
    request.session.clear()
    return RedirectResponse("/signin", status_code=303)
