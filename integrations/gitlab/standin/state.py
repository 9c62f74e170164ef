"""The GitLab stand-in's records, and the request and answer shapes its handlers share.

`api` holds these records and re-exports them; its route handlers build GitLab's JSON
from them. https://docs.gitlab.com/api/rest/
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from integrations.standin.server import Routed

DRAFT_PREFIX = re.compile(r"^\s*(\[draft\]|\(draft\)|draft:|draft\s-\s|draft\s)", re.IGNORECASE)
KINDS = {"issues": "Issue", "merge_requests": "MergeRequest"}


@dataclass
class Project:
    id: int
    path_with_namespace: str
    clone_url: str
    default_branch: str = "main"
    bare: Path | None = None
    visibility: str = "private"  # or "internal", "public"
    members: dict[int, int] = field(default_factory=dict)  # user id -> access level
    issues: dict[int, str] = field(default_factory=dict)  # iid -> title


@dataclass
class Note:
    id: int
    project_id: int
    kind: str  # "issues" or "merge_requests"
    iid: int
    body: str
    author: int
    discussion_id: str
    type: str | None = None  # None, "DiscussionNote" or "DiffNote"
    system: bool = False
    position: dict[str, Any] | None = None
    resolved: bool = False
    awards: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class MergeRequest:
    id: int
    iid: int
    project_id: int
    source_branch: str
    target_branch: str
    title: str
    description: str
    author: int
    state: str = "opened"
    source_project_id: int | None = None
    """The fork its source branch lives in; None for a branch of the project itself."""

    @property
    def draft(self) -> bool:
        return DRAFT_PREFIX.match(self.title) is not None


@dataclass(frozen=True)
class Request(Routed):
    """A routed request and the id of the user its token acts as."""

    user: int


@dataclass(frozen=True)
class Paged:
    """A list answer and its pagination headers."""

    items: list[Any]
    headers: dict[str, str]


Answer = tuple[int, Any]


def message(status: int, text: str) -> Any:
    """GitLab's error document: `{"message": "404 Project Not Found"}`."""
    return {"message": f"{status} {text}"}


def missing(*names: str) -> Answer:
    """Grape's answer to absent required parameters."""
    return 400, {"error": ", ".join(f"{name} is missing" for name in names)}


def body_text(request: Request, key: str) -> str | None:
    """The body's `key` if it is a non-empty string, else None."""
    value = (request.body or {}).get(key)
    return value if isinstance(value, str) and value else None


def paged(request: Request, items: list[Any], url: str | None = None) -> Answer:
    """One page of `items`, with GitLab's offset pagination headers; with the list's `url`,
    also its `Link` header (next, prev, first, last), which clients follow.
    https://docs.gitlab.com/api/rest/#pagination-link-header"""
    per_page = min(int(request.query.get("per_page", ["20"])[0]), 100)
    page = max(int(request.query.get("page", ["1"])[0]), 1)
    pages = max(1, -(-len(items) // per_page))
    headers = {
        "X-Page": str(page),
        "X-Per-Page": str(per_page),
        "X-Total": str(len(items)),
        "X-Total-Pages": str(pages),
        "X-Next-Page": str(page + 1) if page < pages else "",
        "X-Prev-Page": str(page - 1) if page > 1 else "",
    }
    if url is not None:
        headers["Link"] = _links(request, url, page, pages)
    return 200, Paged(items[(page - 1) * per_page : page * per_page], headers)


def _links(request: Request, url: str, page: int, pages: int) -> str:
    query = {key: values[-1] for key, values in request.query.items()}
    targets = {"next": page + 1, "prev": page - 1, "first": 1, "last": pages}
    return ", ".join(
        f'<{url}?{urlencode({**query, "page": str(number)})}>; rel="{rel}"'
        for rel, number in targets.items()
        if 1 <= number <= pages
    )


def now() -> str:
    """The current time as GitLab writes it: `2024-05-01T12:00:00.000Z`."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
