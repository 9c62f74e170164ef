"""What the web app accepts from a request, read one way everywhere: ids in paths and queries,
the URLs it renders as links, and the route a log line names. Pure but for the request."""

from __future__ import annotations

import re
from typing import Final

from starlette.requests import Request
from starlette.routing import Route

# ASCII digits only (`str.isdigit()` also takes "²"), and few enough to fit a 64-bit integer.
ID: Final = re.compile(r"[0-9]{1,18}")
ROW_ID_MAX: Final = 2**31 - 1
"""The largest row id: keys are `Integer`, four bytes on PostgreSQL, which refuses a larger
number in a query (an error, where it should find no row)."""
# A link goes out only to http(s), with no space or control character a browser would strip
# to find another scheme inside.
WEB_URL: Final = re.compile(r"https?://[^\x00-\x20\x7f]+", re.IGNORECASE)


class BadQueryError(ValueError):
    """A query value that must be an id is something else (the page answers 400)."""


def parse_id(raw: object) -> int | None:
    """An id as a path or query carries it; None for anything else, or a number no row has."""
    if not isinstance(raw, str) or not ID.fullmatch(raw):
        return None
    value = int(raw)
    return value if value <= ROW_ID_MAX else None


def path_id(request: Request, name: str) -> int | None:
    return parse_id(request.path_params.get(name))


def query_id(request: Request, name: str) -> int | None:
    """The query's id `name`: None when absent or empty, BadQueryError when not an id."""
    raw = request.query_params.get(name, "")
    if raw == "":
        return None
    found = parse_id(raw)
    if found is None:
        raise BadQueryError(f"{name} must be a number")
    return found


def is_web_url(value: object) -> bool:
    """Templates link only these (`is web_url`); anything else prints as text."""
    return isinstance(value, str) and WEB_URL.fullmatch(value) is not None


def route_of(request: Request) -> str:
    """The matched route's path template (`/link/{token}`), never the path itself, which may
    carry a token."""
    route = request.scope.get("route")
    return route.path if isinstance(route, Route) else "?"
