"""githubkit set up for GitHub's API (the configured URL, its timeout for the whole call and a cap
on each answer through the toolkit's bounded transport, no retries or HTTP cache of its own, a
Retry-After it can read), and its errors as the contract's callback errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import httpx
from githubkit import GitHub, TokenAuthStrategy, UnauthAuthStrategy
from githubkit.exception import RateLimitExceeded, RequestError, RequestFailed, RequestTimeout

from integrations.github.settings import GitHubSettings
from integrations.toolkit.answers import reading
from integrations.toolkit.http import BoundedTransport
from integrations.toolkit.limits import Limits
from resolver.contract.errors import CallbackError, HttpErrors, parse_retry_after
from resolver.core.logs import redact
from resolver.core.settings import Settings

TIMEOUT_SECONDS: Final = 30.0
# GitHub's advice when a secondary rate limit names no wait: at least one minute.
# https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api
SECONDARY_LIMIT_WAIT: Final = 60.0
MESSAGE_LIMIT: Final = 300
ERRORS: Final = HttpErrors("GitHub")


def github_session(
    settings: Settings, token: str | None = None, timeout: float = TIMEOUT_SECONDS
) -> GitHub[Any]:
    """githubkit pointed at `GitHubSettings.api_url` (GitHub Enterprise, a test server)."""
    auth = TokenAuthStrategy(token) if token is not None else UnauthAuthStrategy()
    return GitHub(
        auth,
        base_url=GitHubSettings.of(settings).api_url,
        user_agent=f"Resolver ({settings.bot_name})",
        timeout=timeout,
        auto_retry=False,
        http_cache=False,
        transport=BoundedTransport(limits=Limits(seconds=timeout)),
        event_hooks={"response": [_retry_after_in_seconds]},
    )


def warm() -> None:
    """Make a new job's first calls (an installation token, the 👀, its status comment) against
    an in-process transport, no network: githubkit loads an endpoint's modules on its first
    call, which cost a cold callbacks worker's first 👀s about 2 s under a burst of mentions on
    a loaded host (bench/load.py)."""
    github = GitHub(
        UnauthAuthStrategy(),
        base_url="http://warm.invalid/",
        transport=httpx.MockTransport(lambda _request: httpx.Response(201, json={})),
        auto_retry=False,
        http_cache=False,
    )
    github.rest.apps.create_installation_access_token(1, repositories=["r"])
    github.rest.reactions.create_for_issue_comment("o", "r", 1, content="eyes")
    github.rest.issues.create_comment("o", "r", 1, body="warm")
    github.rest.issues.update_comment("o", "r", 1, body="warm")


def _retry_after_in_seconds(response: httpx.Response) -> None:
    # githubkit reads Retry-After as an integer and would crash on the HTTP-date form, and
    # overflow on a number of twenty digits: it gets our reading, bounded.
    value = response.headers.get("retry-after")
    if value is not None:
        seconds = parse_retry_after(value)
        response.headers["retry-after"] = str(round(seconds if seconds is not None else 60))


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Turn githubkit's errors during `action` (`"POST /repos/{owner}/{repo}/pulls"`) into ours,
    and an answer read within that is not of the shape read into GitHub's unusable answer."""
    with reading(ERRORS, action):
        try:
            yield
        except RateLimitExceeded as error:
            status, wait = error.response.status_code, error.retry_after.total_seconds()
            raise ERRORS.rate_limited(action, status, wait) from None
        except RequestFailed as error:
            raise from_response(action, error.response.raw_response) from None
        except RequestTimeout:
            raise ERRORS.timed_out(action) from None
        except RequestError as error:
            if isinstance(error.exc, httpx.DecodingError):  # its encoding does not describe it
                raise ERRORS.unusable_answer(action, error.exc) from None
            if not isinstance(error.exc, httpx.TransportError):
                raise
            raise ERRORS.unreachable(action, error.exc) from None


def from_response(action: str, response: httpx.Response) -> CallbackError:
    """GitHub's error answer to `action` as the callback error it means (a secondary rate
    limit is transient, with GitHub's wait)."""
    status = response.status_code
    detail = _error_detail(response)
    secondary = status == 403 and "secondary rate limit" in detail.lower()
    wait = parse_retry_after(response.headers.get("retry-after"))
    if wait is None and secondary:
        wait = SECONDARY_LIMIT_WAIT
    return ERRORS.answered(action, status, detail, retry_after=wait, transient=secondary)


def _error_detail(response: httpx.Response) -> str:
    """GitHub's `message` plus each validation error's message, redacted and shortened."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return response.reason_phrase or "no message"
    parts = [str(data.get("message") or response.reason_phrase)]
    for item in data.get("errors") or []:
        if isinstance(item, dict) and item.get("message"):
            parts.append(str(item["message"]))
    return redact(": ".join(parts))[:MESSAGE_LIMIT]
