"""python-gitlab set up for GitLab's API (the configured URL, no retries and no sleep on 429,
its last answer's headers kept), and its errors as the contract's callback errors."""

from __future__ import annotations

import functools
import io
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import urlsplit

import gitlab
import requests
from gitlab.exceptions import GitlabError

from integrations.gitlab.settings import GitLabSettings
from integrations.toolkit.answers import reading
from integrations.toolkit.limits import API_CALL, Limits
from integrations.toolkit.sessions import mount_bounded
from resolver.contract.errors import HttpErrors, parse_retry_after
from resolver.core.logs import redact
from resolver.core.settings import Settings

TIMEOUT_SECONDS: Final = 30.0
MESSAGE_LIMIT: Final = 300
ERROR_READ_LIMIT: Final = 8 * 1024  # of an error answer: its message is cut to 300 anyway
ERRORS: Final = HttpErrors("GitLab")


class Connection:
    """python-gitlab that never waits or retries, and the headers of its last answer (its errors
    carry none, and Retry-After is one of them)."""

    def __init__(self, settings: Settings, token: str, limits: Limits = API_CALL) -> None:
        url = GitLabSettings.of(settings).url
        self.api = gitlab.Gitlab(
            url,
            private_token=token,
            timeout=TIMEOUT_SECONDS,
            retry_transient_errors=False,
            user_agent=f"Resolver ({settings.bot_name})",
            session=OwnOrigin(url, limits),
            keep_base_url=True,  # a `next` link is read against the configured URL
        )
        # obey_rate_limit would sleep on 429 inside the callback task, up to ten times.
        self.api.http_request = functools.partial(self.api.http_request, obey_rate_limit=False)
        self.api.session.hooks["response"].append(self._remember)
        self.last_headers: Mapping[str, str] = {}

    def _remember(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.last_headers = response.headers


class OwnOrigin(requests.Session):
    """A session that sends the token to the configured GitLab alone: no redirect is followed,
    and a request elsewhere (a page's `next` link) is refused. requests drops only an
    `Authorization` header on a redirect to another host, and python-gitlab's token goes as
    `PRIVATE-TOKEN`. Each answer is read within `limits`."""

    def __init__(self, url: str, limits: Limits = API_CALL) -> None:
        super().__init__()
        self.origin = _origin(url)
        self.max_redirects = 0
        mount_bounded(self, limits)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        if _origin(request.url or "") != self.origin:
            raise requests.exceptions.InvalidURL("GitLab led to another host: not followed")
        kwargs["allow_redirects"] = False
        response = super().send(request, **kwargs)
        if kwargs.get("stream") and response.status_code >= 300:
            _keep_start(response)
        return response


def _keep_start(response: requests.Response) -> None:
    """An error answer to a streamed call (a job's log) as its first ERROR_READ_LIMIT bytes:
    python-gitlab keeps the whole body as the error's message, and a 500 of 192 MB was read
    whole into memory."""
    start = next(response.iter_content(ERROR_READ_LIMIT), b"")  # read errors as requests'
    response.close()
    response.raw = io.BytesIO(start)  # what requests reads `content` from, once consumed


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


@contextmanager
def translate_errors(action: str, headers: Callable[[], Mapping[str, str]]) -> Iterator[None]:
    """Turn python-gitlab's and requests' errors during `action` (`"POST
    /projects/:id/merge_requests"`) into ours; `headers` gives the failed answer's headers. An
    answer read within that is not of the shape read is GitLab's unusable answer."""
    with reading(ERRORS, action):
        try:
            yield
        except GitlabError as error:
            if error.response_code is None:  # not JSON, or a redirect of a POST
                raise ERRORS.unusable_answer(action, error) from None
            detail = error_detail(error.error_message)
            wait = retry_after(headers())
            raise ERRORS.answered(action, error.response_code, detail, retry_after=wait) from None
        except (
            requests.ConnectionError,
            requests.Timeout,
            requests.exceptions.ChunkedEncodingError,
        ) as error:
            raise ERRORS.unreachable(action, error) from None
        except (requests.TooManyRedirects, requests.exceptions.InvalidURL) as error:
            # A redirect, or a link to another host (OwnOrigin): not where the token may go.
            raise ERRORS.unusable_answer(action, error) from None
        except requests.exceptions.ContentDecodingError as error:  # past its cap, or corrupt
            raise ERRORS.unusable_answer(action, error) from None


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait: `Retry-After`, else GitLab's `RateLimit-Reset` (a Unix time).
    https://docs.gitlab.com/security/rate_limits/#headers"""
    wait = parse_retry_after(headers.get("Retry-After"))
    reset = headers.get("RateLimit-Reset", "").strip()
    if wait is None and reset.isdigit():
        wait = max(0.0, int(reset) - (time.time() if now is None else now))
    return wait


def error_detail(detail: object) -> str:
    """GitLab's `message`, which is a string, a list, or a field -> errors object; redacted
    and shortened."""
    if isinstance(detail, bytes):
        text = detail.decode(errors="replace")
    elif isinstance(detail, list):
        text = "; ".join(str(item) for item in detail)
    elif isinstance(detail, dict):
        text = "; ".join(f"{key} {_joined(value)}" for key, value in detail.items())
    else:
        text = str(detail)
    return redact(text.strip() or "no message")[:MESSAGE_LIMIT]


def _joined(value: object) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
