"""The GitHub stand-in's records, and the request, answer and JSON pieces its handlers share.

`api` holds these records and re-exports them; its route handlers build GitHub's JSON
from them. https://docs.github.com/rest
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from integrations.standin.server import Routed

DOCS = "https://docs.github.com/rest"
BOT_LOGIN = "resolver[bot]"


@dataclass
class Repo:
    full_name: str
    clone_url: str
    default_branch: str = "main"
    private: bool = False
    collaborators: dict[str, str] = field(default_factory=dict)
    bare: Path | None = None
    drafts_supported: bool = True
    id: int = field(default_factory=lambda: secrets.randbelow(10**8))


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    body: str
    login: str
    reactions: list[tuple[str, str]] = field(default_factory=list)
    in_reply_to: int | None = None
    path: str | None = None
    line: int | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    diff_hunk: str | None = None
    review_id: int | None = None
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass
class Pull:
    number: int
    repo: str
    head: str
    base: str
    title: str
    body: str
    draft: bool
    state: str = "open"
    author: str = BOT_LOGIN
    head_repo: str | None = None
    """The fork the head branch lives in; None for a branch of `repo` itself."""


@dataclass(frozen=True)
class Request(Routed):
    """A routed request and the login it acts as."""

    login: str


Answer = tuple[int, Any]


@dataclass(frozen=True)
class Page:
    """A list answer that GitHub pages (`per_page`, `page` and a Link header)."""

    items: list[Any]


def error_body(status: int, message: str, errors: list[dict[str, str]] | None = None) -> Any:
    """GitHub's error document."""
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": str(status)}
    if errors:
        body["errors"] = errors
    return body


def missing(field_name: str, resource: str) -> Answer:
    """GitHub's 422 for a required field the request body lacks."""
    errors = [{"resource": resource, "field": field_name, "code": "missing_field"}]
    return 422, error_body(422, "Validation Failed", errors)


def body_text(request: Request, key: str = "body") -> str | None:
    value = (request.body or {}).get(key)
    return value if isinstance(value, str) else None


def now() -> str:
    return timestamp(datetime.now(UTC))


def timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def user_json(login: str, user_id: int, web_url: str) -> dict[str, Any]:
    """GitHub's simple user: a login ending in `[bot]` is a Bot."""
    kind = "Bot" if login.endswith("[bot]") else "User"
    return {
        "login": login,
        "id": user_id,
        "node_id": f"U_{user_id}",
        "type": kind,
        "html_url": f"{web_url}/{login}",
        "avatar_url": f"{web_url}/{login}.png",
    }
