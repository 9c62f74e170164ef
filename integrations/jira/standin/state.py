"""The Jira stand-in's site: users, issues and their comments, a routed request with its user,
and Jira's error document."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from integrations.standin.server import Routed

API = "/rest/api/2"


@dataclass(frozen=True)
class User:
    account_id: str
    display_name: str
    name: str | None = None  # Data Center username
    account_type: str = "atlassian"


@dataclass
class Comment:
    id: int
    issue_id: int
    body: str
    author: User
    created: datetime
    updated: datetime
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class Issue:
    id: int
    key: str
    summary: str
    description: str | None
    readers: frozenset[str] | None = None  # account ids that may see it; None: everyone
    comments: list[Comment] = field(default_factory=list)


@dataclass(frozen=True)
class Request(Routed):
    """A routed request and its user (None on an anonymous route)."""

    user: User | None


Answer = tuple[int, Any]


def error_body(*messages: str, errors: dict[str, str] | None = None) -> dict[str, Any]:
    """Jira's error document."""
    return {"errorMessages": list(messages), "errors": errors or {}}
