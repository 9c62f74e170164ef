"""Proving a chat or tracker account before linking it: from a public link's page, the viewer
signs in with that provider (its `IdentityProof`, driven by Authlib), and the account it names
must be the one the link was made for. The proof is kept in the session for that link alone."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any, Final

import httpx
import httpx2
from authlib.integrations.starlette_client import OAuthError
from joserfc.errors import JoseError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.contract.signin import ForgeUnreachableError, OAuthClient, Person, SignInError
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.ingress.links import LinkClaim, LinkError, read_link
from resolver.web.access import Viewer
from resolver.web.context import current_viewer, page, to_signin, web_of

logger = logging.getLogger(__name__)

# What Authlib raises when the exchange or the ID token fails, the exchange outlives its
# deadline or an answer its cap (oauth_http): the person is asked to retry. Authlib makes its
# requests with httpx2, whose errors are not httpx's.
REFUSED = (
    OAuthError,
    JoseError,
    httpx.HTTPError,
    httpx2.HTTPError,
    KeyError,
    ValueError,
    TimeoutError,
)
EXCHANGE_SECONDS: Final = 10.0
"""The most a code exchange may take, with the keys an ID token is checked against: httpx2's
timeout bounds each read, and a forge sending a byte at a time held the request (and a
connection of the web's pool) as long as it liked."""
PROVING = "proving"  # the session's link whose proof is under way
PROOF = "proof"  # the session's proven account: {"link": link_key, "id": …, "l": login}


async def exchanged(client: Any, request: Request) -> Any:
    """The token Authlib's `client` gets for the code `request` brings back, within
    EXCHANGE_SECONDS (TimeoutError past them)."""
    async with asyncio.timeout(EXCHANGE_SECONDS):
        return await client.authorize_access_token(request)


def proof_clients(settings: Settings) -> list[tuple[str, OAuthClient]]:
    """The OAuth client of each chat or tracker whose identity proof is configured."""
    found = []
    for provider in registry.proofs(settings):
        assert provider.proof is not None
        client = provider.proof.client(settings)
        assert client is not None
        found.append((provider.name, client))
    return found


def link_key(token: str) -> str:
    """Names a link in the session without keeping the link itself there twice."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def proven(request: Request, token: str, claim: LinkClaim) -> str | None:
    """The login proven for this link's account in this session; None without a proof."""
    proof = request.session.get(PROOF)
    if not isinstance(proof, dict) or proof.get("link") != link_key(token):
        return None
    if proof.get("id") != claim.external_id:
        return None
    return str(proof.get("l") or claim.external_id)


def forget(request: Request) -> None:
    request.session.pop(PROOF, None)


def _callback_url(settings: Settings, name: str) -> str:
    return f"{settings.public_url.rstrip('/')}/prove/{name}/done"


async def start(request: Request) -> Response:
    """`/link/{token}/prove`: off to the provider's sign-in, to come back to `done`."""
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    token = str(request.path_params["token"])
    settings = web_of(request).settings
    try:
        claim = read_link(settings, token)
    except LinkError as error:
        return page(request, "link.html", viewer, status_code=403, problem=str(error))
    client = request.app.state.proofs.create_client(claim.provider, settings)
    if client is None:  # the link's page says what is missing
        return RedirectResponse(f"/link/{token}", status_code=303)
    request.session[PROVING] = token
    callback = _callback_url(settings, claim.provider)
    redirect: Response = await client.authorize_redirect(request, callback)
    return redirect


async def done(request: Request) -> Response:
    """The provider sends the viewer back with a code: learn whom it proves, and keep that for
    the link when it is the account the link names."""
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    settings = web_of(request).settings
    name = str(request.path_params["provider"])
    token = request.session.pop(PROVING, None)
    found = registry.find(name)
    client = request.app.state.proofs.create_client(name, settings)
    if not isinstance(token, str) or found is None or found.proof is None or client is None:
        return _again(request, viewer, "There is no proof under way; open your link again.")
    try:
        claim = read_link(settings, token)
    except LinkError as error:
        return page(request, "link.html", viewer, status_code=403, problem=str(error))
    if claim.provider != name:
        return _again(request, viewer, "That proof was for another link; open your link again.")
    try:
        answer = await exchanged(client, request)
        person = await run_in_threadpool(found.proof.whoami, settings, str(answer["access_token"]))
    except (*REFUSED, SignInError, ForgeUnreachableError) as e:
        log(logger, logging.WARNING, "web.proof_failed", provider=name, error=type(e).__name__)
        message = f"{found.display_name} did not complete the sign-in; please try again."
        return _again(request, viewer, message, f"/link/{token}")
    if person.external_id != claim.external_id:
        log(logger, logging.WARNING, "web.proof_mismatch", provider=name)
        problem = _mismatch(claim, person)
        return page(request, "link.html", viewer, status_code=403, problem=problem)
    request.session[PROOF] = {"link": link_key(token), "id": person.external_id, "l": person.login}
    log(logger, logging.INFO, "web.proven", provider=name)
    return RedirectResponse(f"/link/{token}", status_code=303)


def _mismatch(claim: LinkClaim, person: Person) -> str:
    found = registry.find(claim.provider)
    name = found.display_name if found is not None else claim.provider
    return (
        f"This link is for the {name} account {claim.account}, and you proved you are "
        f"{person.login} (account {person.external_id}) on {name}. Nothing was linked: sign in "
        f"to {name} as {claim.account}, then open the link again."
    )


def _again(request: Request, viewer: Viewer, problem: str, retry: str | None = None) -> Response:
    return page(request, "link.html", viewer, status_code=400, problem=problem, retry=retry)
