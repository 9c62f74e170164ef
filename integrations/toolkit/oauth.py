"""A forge's sign-in, written once: its OAuth client from the settings (`configured_client`), a GET
as the viewer (`viewer_get`), its answers about the account and a repository, and the refresh
grant (RFC 6749 section 6) that renews the viewer's token. Each forge's `signin.py` passes its
names, URLs and quirks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import httpx
from pydantic import SecretStr

from integrations.toolkit.answers import SHAPE_ERRORS
from integrations.toolkit.http import bounded_client
from integrations.toolkit.limits import Limits
from resolver.contract.inbound import secret_value
from resolver.contract.signin import (
    ForgeUnreachableError,
    IssuedToken,
    OAuthClient,
    RefreshRefusedError,
    SignInError,
    issued_token,
)

TIMEOUT: Final = 10.0
JSON: Final[Mapping[str, str]] = {"Accept": "application/json"}
SIGN_IN: Final = Limits(seconds=TIMEOUT)
"""A sign-in call's deadline, from its request to its answer's last byte: a person waits on the
page for it. Its answer's cap is any API answer's."""
T = TypeVar("T")


def configured_client(
    client_id: str | None,
    client_secret: SecretStr | None,
    base: str | None,
    *,
    authorize: str,
    token: str,
    scope: str,
    secret_in_body: bool = False,
) -> OAuthClient | None:
    """The OAuth client whose `authorize` and `token` endpoints are below `base`; None unless
    the client id, its secret and `base` are all set."""
    secret = secret_value(client_secret)
    if not base or not client_id or secret is None:
        return None
    base = base.rstrip("/")
    return OAuthClient(
        client_id=client_id,
        client_secret=secret,
        authorize_url=base + authorize,
        access_token_url=base + token,
        scope=scope,
        secret_in_body=secret_in_body,
    )


def viewer_get(
    vendor: str,
    url: str,
    authorization: str,
    *,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] = JSON,
    signed_out: frozenset[int] = frozenset({401}),
    limits: Limits = SIGN_IN,
) -> httpx.Response:
    """GET `url` with the viewer's `Authorization` header: SignInError when the forge no longer
    takes the token (`signed_out`), ForgeUnreachableError when it did not answer or failed."""
    try:
        with bounded_client(limits) as http:
            response = http.get(
                url,
                headers={"Authorization": authorization, **headers},
                params=dict(params) if params else None,
            )
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"{vendor} did not answer: {type(error).__name__}") from None
    if response.status_code in signed_out:
        raise SignInError(f"{vendor} no longer accepts your sign-in")
    if response.status_code >= 500:
        raise ForgeUnreachableError(f"{vendor} answered {response.status_code}")
    return response


def account_answer(vendor: str, response: httpx.Response, what: str = "account") -> Any:
    """The JSON of the forge's answer about the viewer's own account; SignInError on another
    status than 200."""
    if response.status_code != 200:
        raise SignInError(f"{vendor} answered {response.status_code} for your {what}")
    return _object(vendor, response)


def repo_answer(vendor: str, response: httpx.Response, repo: str) -> Any | None:
    """The JSON of the forge's answer about a repository, None where it hides the repository
    from the viewer (403, 404); ForgeUnreachableError on another status than 200."""
    if response.status_code in (403, 404):
        return None
    if response.status_code != 200:
        raise ForgeUnreachableError(f"{vendor} answered {response.status_code} for {repo}")
    return _object(vendor, response)


def _object(vendor: str, response: httpx.Response) -> dict[str, Any]:
    """The answer's JSON object; ForgeUnreachableError for anything else (a proxy's HTML page,
    a list, an empty object), which the page says as it says the forge is down, not as a 500."""
    data = _json_object(response)
    if not data:
        raise ForgeUnreachableError(f"{vendor} gave an answer that is not its API's")
    return data


def read_answer(vendor: str, answer: Callable[[], Any], shape: Callable[[Any], T]) -> T:
    """The decoded answer (`answer`: a response's `.json`) as `shape` reads it, with
    toolkit/answers' readers. One of the wrong shape (a page, a list, an id of null) is
    ForgeUnreachableError: the page asks to try again, where it was a 500, and no identity is
    ever made of a null or empty id."""
    try:
        return shape(answer())
    except SHAPE_ERRORS:
        raise ForgeUnreachableError(f"{vendor} gave an answer that is not its API's") from None


@dataclass(frozen=True)
class RefreshGrant:
    """How a forge's token endpoint takes a refresh grant and says no to one."""

    vendor: str
    """Who issues the tokens, as people read it in an error."""
    basic_auth: bool = False
    """The client authenticates by HTTP Basic, not with its id and secret in the form."""
    form: Mapping[str, str] | None = None
    """Sent besides the standard fields (a scope, a redirect URI)."""
    refusals: frozenset[str] = frozenset({"invalid_grant", "unauthorized_client"})
    """The `error` codes that refuse the refresh token itself (RFC 6749 section 5.2)."""
    refusal_statuses: frozenset[int] | None = frozenset({400, 401})
    """The statuses a refusal comes with; None: any (some forges answer 200 and an error)."""


def refresh_grant(
    grant: RefreshGrant, client: OAuthClient | None, token: str, limits: Limits = SIGN_IN
) -> IssuedToken:
    """Trade a refresh token for new tokens at the client's token endpoint.
    RefreshRefusedError when the forge refuses the refresh token; ForgeUnreachableError when
    sign-in is not configured or the forge gave no token."""
    if client is None:
        raise ForgeUnreachableError(
            f"{grant.vendor} sign-in is not configured; no token can be renewed"
        )
    form = {"grant_type": "refresh_token", "refresh_token": token, **(grant.form or {})}
    auth = (client.client_id, client.client_secret) if grant.basic_auth else None
    if auth is None:
        form = {"client_id": client.client_id, "client_secret": client.client_secret, **form}
    try:
        with bounded_client(limits) as http:
            response = http.post(
                client.access_token_url,
                data=form,
                auth=auth or httpx.USE_CLIENT_DEFAULT,
                headers=JSON,
            )
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(
            f"{grant.vendor} did not answer: {type(error).__name__}"
        ) from None
    answer = _json_object(response)
    said = answer.get("error")
    problem = said if isinstance(said, str) else ("malformed" if said else None)
    statuses = grant.refusal_statuses
    if problem in grant.refusals and (statuses is None or response.status_code in statuses):
        raise RefreshRefusedError(f"{grant.vendor} refused the refresh token")
    access = answer.get("access_token")
    if response.status_code != 200 or problem or not isinstance(access, str) or not access:
        raise ForgeUnreachableError(
            f"{grant.vendor} did not renew the token "
            f"({response.status_code} {problem or 'no token'})"
        )
    return issued_token(answer)


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
