"""Jira's REST API v2 through the `jira` library: the calls Resolver makes back to a Jira site.

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user): `translate_errors` reads the library's errors and contract's `HttpErrors`
decides. The library's own retries are off: the callback tasks retry, with one attempt row per
try. API v2 speaks wiki markup, not ADF.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote

import requests
from jira import JIRA
from jira.exceptions import JIRAError
from jira.utils import json_loads

from integrations.toolkit.answers import fields, items, reading, text
from integrations.toolkit.limits import API_CALL, Limits
from integrations.toolkit.sessions import mount_bounded
from resolver.contract.errors import (
    CallbackError,
    HttpErrors,
    parse_retry_after,
)
from resolver.core.logs import redact, register_secret

TIMEOUT_SECONDS: Final = 30
MESSAGE_LIMIT: Final = 300
ERRORS: Final = HttpErrors("Jira", refused=" (the stored Jira token was refused)", url="site URL")
_BAD_URL: Final = (
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
)


@dataclass(frozen=True)
class JiraIssue:
    key: str
    summary: str
    description: str | None


@dataclass(frozen=True)
class JiraComment:
    """A comment as Jira returns it: Cloud names authors by `accountId`, Data Center by `name`.
    `properties` (key to JSON value) are read only when asked for."""

    id: str
    body: str
    author_display_name: str | None
    author_name: str | None
    author_account_id: str | None
    created: datetime | None
    properties: Mapping[str, Any]


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Turn the library's errors during `action` (`"POST /rest/api/2/…"`) into ours, and an
    answer read within that is not of the shape read into Jira's unusable answer."""
    with reading(ERRORS, action):
        try:
            yield
        except JIRAError as error:
            raise _from_jira_error(action, error) from None
        except _BAD_URL as error:
            raise ERRORS.unusable_url(action, error) from None
        except requests.exceptions.ContentDecodingError as error:  # past its cap, or corrupt
            raise ERRORS.unusable_answer(action, error) from None
        except requests.Timeout:
            raise ERRORS.timed_out(action) from None
        # requests' JSONDecodeError is a RequestException too: an answer, not a lost connection.
        except requests.JSONDecodeError as error:
            raise ERRORS.unusable_answer(action, error) from None
        except requests.RequestException as error:
            raise ERRORS.unreachable(action, error) from None


def _from_jira_error(action: str, error: JIRAError) -> CallbackError:
    # str(error) would include the request's headers: build the message from parts only.
    status = error.status_code
    response = error.response if isinstance(error.response, requests.Response) else None
    reason = response.reason if response is not None else None
    detail = redact(str(error.text or reason or "no message"))[:MESSAGE_LIMIT]
    wait = _retry_after(response.headers) if response is not None else None
    return ERRORS.answered(action, status, detail, retry_after=wait)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """`Retry-After`, else Jira Cloud's `X-RateLimit-Reset` (an ISO 8601 timestamp)."""
    wait = parse_retry_after(headers.get("Retry-After"))
    reset = headers.get("X-RateLimit-Reset")
    if wait is not None or not reset:
        return wait
    try:
        when = datetime.fromisoformat(reset.replace("Z", "+00:00"))
    except ValueError:
        return None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def jira_session(site: str, credential: str, limits: Limits = API_CALL) -> Any:
    """A `jira.JIRA` for `site`: Basic auth when the credential is `email:api_token` (Cloud),
    else a bearer personal access token (Data Center), each call held to `limits`. No request
    is sent here."""
    email, colon, token = credential.partition(":")
    register_secret(credential, passing=True)
    auth: dict[str, Any]
    if colon and email and token:
        register_secret(token, passing=True)
        register_secret(base64.b64encode(credential.encode()).decode(), passing=True)
        auth = {"basic_auth": (email, token)}
    else:
        auth = {"token_auth": credential}
    jira = JIRA(server=site, get_server_info=False, max_retries=0, timeout=TIMEOUT_SECONDS, **auth)
    # The library takes no session; its own is the one the calls below already send through.
    mount_bounded(jira._session, limits)
    return jira


class JiraClient:
    """The REST calls Resolver makes on one Jira site, with one stored credential."""

    def __init__(self, site: str, credential: str) -> None:
        self.site = site.rstrip("/")
        self._jira = jira_session(self.site, credential)

    def __repr__(self) -> str:
        return f"JiraClient({self.site!r})"

    def add_comment(
        self, issue_key: str, body: str, properties: Mapping[str, Any] | None = None
    ) -> str:
        """Comment on the issue (`body` in wiki markup), with comment properties (key to JSON
        value, never shown to people); returns the new comment's id."""
        # The library's add_comment takes no properties; Jira sets them with the comment:
        # https://developer.atlassian.com/cloud/jira/platform/rest/v2/api-group-issue-comments/#api-rest-api-2-issue-issueidorkey-comment-post
        data: dict[str, Any] = {"body": body}
        if properties:
            data["properties"] = [{"key": k, "value": v} for k, v in properties.items()]
        path = f"issue/{quote(issue_key, safe='')}/comment"
        with translate_errors("POST /rest/api/2/issue/{issueIdOrKey}/comment"):
            answer = self._jira._session.post(self._jira._get_url(path), data=json.dumps(data))
            return text(fields(json_loads(answer))["id"])

    def edit_comment(self, issue_key: str, comment_id: str, body: str) -> None:
        """Replace the body of a comment (a status message, say) with one PUT; its comment
        properties stay as they are."""
        # The library's Comment.update needs a GET first and reloads with another after the
        # PUT: three requests against Jira's rate limit for every status edit.
        path = f"issue/{quote(issue_key, safe='')}/comment/{quote(comment_id, safe='')}"
        with translate_errors("PUT /rest/api/2/issue/{issueIdOrKey}/comment/{id}"):
            self._jira._session.put(self._jira._get_url(path), data=json.dumps({"body": body}))

    def comments(
        self, issue_key: str, limit: int, *, properties: bool = False
    ) -> list[JiraComment]:
        """The issue's `limit` newest comments, oldest first; with their comment properties
        when `properties` (Jira's `expand=properties`, on Cloud and Data Center)."""
        params = {"maxResults": str(limit), "orderBy": "-created"}
        if properties:
            params["expand"] = "properties"
        path = f"issue/{quote(issue_key, safe='')}/comment"
        with translate_errors("GET /rest/api/2/issue/{issueIdOrKey}/comment"):
            found = items(fields(self._get(path, params))["comments"])
            return [_comment(item) for item in reversed(found)]

    def issue(self, key: str) -> JiraIssue:
        """The issue's key, summary and description (wiki markup)."""
        params = {"fields": "summary,description"}
        with translate_errors("GET /rest/api/2/issue/{issueIdOrKey}"):
            raw = fields(self._get(f"issue/{quote(key, safe='')}", params))
            found = fields(raw["fields"])
            description = found.get("description")
            return JiraIssue(
                key=str(raw.get("key") or key),
                summary=str(found.get("summary") or ""),
                description=description if isinstance(description, str) else None,
            )

    def _get(self, path: str, params: Mapping[str, str]) -> Any:
        """A GET's JSON answer. The library's own readers log an answer that is no JSON whole,
        at ERROR, one of them on the root logger: a proxy's page or a token echoed in logs."""
        return json_loads(self._jira._session.get(self._jira._get_url(path), params=params))


def _comment(raw: Mapping[str, Any]) -> JiraComment:
    author = raw.get("author") or {}
    body = raw.get("body")
    return JiraComment(
        id=text(raw["id"]),
        body=body if isinstance(body, str) else "",
        author_display_name=author.get("displayName"),
        author_name=author.get("name"),
        author_account_id=author.get("accountId"),
        created=_timestamp(raw.get("created")),
        properties={
            str(item["key"]): item.get("value")
            for item in raw.get("properties") or ()
            if isinstance(item, Mapping) and "key" in item
        },
    )


def _timestamp(value: object) -> datetime | None:
    """Jira's `2026-01-05T09:01:00.000+0000`; None when missing or malformed."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
