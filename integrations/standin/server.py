"""What the provider stand-ins share: a loopback HTTP server, recorded requests, routes written
as path templates, JSON answers and queued faults.

    class AcmeAPI(RestStandIn):                  # a REST API on loopback
        NOT_FOUND = {"error": "not found"}       # the answer to a path no route matches
        def __init__(self) -> None:
            self.tokens = {}                     # the provider's state first...
            super().__init__(ROUTES, prefix="/api")   # ...then the server starts
        def fault_body(self, status: int) -> Any: ...   # Acme's error document
        def serve(self, call: Routed) -> Reply: ...     # Acme's auth, then the route's handler

`Loopback` is the bare server (git_http's smart-HTTP server builds on it), `StandIn` adds
recorded requests, JSON answers and faults (Slack, Linear), `RestStandIn` adds routes (GitHub,
GitLab, Jira). Each stand-in keeps only its provider's own parts: paths, auth, payload shapes,
error documents and headers. The web pieces at the end serve what a browser and an OAuth
client see outside a forge's REST API (its WEB_ROUTES).
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Generic, Self, TypeVar
from urllib.parse import parse_qs, parse_qsl, unquote_plus, urlencode, urlsplit, urlunsplit

OwnerT = TypeVar("OwnerT", bound="Loopback", covariant=True)
RecordT = TypeVar("RecordT")
# Status, JSON answer (or text, as the stand-in's TEXT_BODIES allow) and extra headers.
Reply = tuple[int, Any, dict[str, str]]
# A page outside a REST API: the stand-in, the request's parameters and headers.
WebHandler = Callable[[Any, dict[str, str], dict[str, str]], Reply]


class ManyClientsServer(ThreadingHTTPServer):
    """A threading HTTP server that many clients may connect to at once. socketserver listens
    with a backlog of 5: when more connect at once than its accepting thread takes (48 jobs and
    the callbacks worker, in bench/load.py), the kernel drops the next SYN, and that client
    waits out TCP's one-second retransmission: a 👀 a second late."""

    daemon_threads = True
    request_queue_size = socket.SOMAXCONN


class LoopbackServer(ManyClientsServer, Generic[OwnerT]):
    def __init__(self, handler: type[LoopbackHandler], owner: OwnerT) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.owner = owner


class Loopback:
    """An HTTP server on a random loopback port, serving from a thread until `close()` or the
    end of a `with` block. It starts in `__init__`: subclasses call it once their state is set."""

    # Other methods get http.server's 501, as from a handler without their `do_` method.
    METHODS: ClassVar[frozenset[str]] = frozenset({"GET", "POST"})

    def __init__(self, handler: type[LoopbackHandler]) -> None:
        self._server = LoopbackServer(handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class LoopbackHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no log lines (tests read what the server recorded); `answer` serves each
    request whose method the owner lists in METHODS."""

    protocol_version = "HTTP/1.1"
    server: LoopbackServer[Loopback]

    def do_GET(self) -> None:
        self._answer_allowed()

    def do_POST(self) -> None:
        self._answer_allowed()

    def do_PATCH(self) -> None:
        self._answer_allowed()

    def do_PUT(self) -> None:
        self._answer_allowed()

    def do_DELETE(self) -> None:
        self._answer_allowed()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def answer(self) -> None:
        raise NotImplementedError

    def _answer_allowed(self) -> None:
        if self.command in self.server.owner.METHODS:
            self.answer()
        else:
            message = f"Unsupported method ({self.command!r})"
            self.send_error(HTTPStatus.NOT_IMPLEMENTED, message)


@dataclass
class Fault:
    """An answer given instead of the real one, `remaining` more times. An `applied` fault is
    a lost answer: the request takes effect first (a timeout after the provider acted)."""

    status: int
    remaining: int
    headers: dict[str, str]
    body: Any
    applied: bool = False


class Faults:
    """Faults queued by what they answer: a route, a method or an operation."""

    def __init__(self) -> None:
        self._queued: dict[str, Fault] = {}

    def queue(self, key: str, fault: Fault) -> None:
        self._queued[key] = fault

    def take(self, key: str) -> Fault | None:
        """The fault for this call to `key`, counted off; None when none is left."""
        fault = self._queued.get(key)
        if fault is None or fault.remaining <= 0:
            return None
        fault.remaining -= 1
        return fault


class StandIn(Loopback, ABC, Generic[RecordT]):
    """A provider's API on loopback: `handle` records each request in `requests` and answers it
    with a Reply, or with None to close the connection without an answer."""

    JSON_TYPE: ClassVar[str] = "application/json; charset=utf-8"
    TEXT_TYPE: ClassVar[str] = "text/plain"
    # Answers of these types go out as text (a proxy's page, a rate limiter's plain text).
    TEXT_BODIES: ClassVar[tuple[type[str] | type[bytes], ...]] = ()

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[RecordT] = []
        self._faults = Faults()
        super().__init__(_StandInHandler)

    @abstractmethod
    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], raw: bytes
    ) -> Reply | None: ...

    def reply_headers(self) -> dict[str, str]:
        """Headers the provider sends with every answer (a request id)."""
        return {}

    def encode(self, answer: Any) -> tuple[bytes, str]:
        """The answer's bytes and content type."""
        if isinstance(answer, Text):
            return answer.body.encode(), answer.content_type
        if isinstance(answer, self.TEXT_BODIES):
            return (answer.encode() if isinstance(answer, str) else answer), self.TEXT_TYPE
        return (b"" if answer is None else json.dumps(answer).encode()), self.JSON_TYPE


class _StandInHandler(LoopbackHandler):
    server: LoopbackServer[StandIn[Any]]

    def answer(self) -> None:
        standin = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = standin.handle(self.command, self.path, headers, raw)
        if reply is None:
            self.close_connection = True
            return
        status, answer, extra = reply
        data, content_type = standin.encode(answer)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in [*standin.reply_headers().items(), *extra.items()]:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# --- REST APIs: routes written as the provider's path templates ------------------------------


def template_regex(template: str) -> re.Pattern[str]:
    """`/repos/{owner}/{repo}` as a regex with one group per parameter, in order."""
    literal_parts = re.split(r"\{[^/}]+\}", template)
    return re.compile("^" + "([^/]+)".join(re.escape(p) for p in literal_parts) + "$")


def template_params(template: str) -> list[str]:
    return re.findall(r"\{([^/}]+)\}", template)


class Routes:
    """Route keys, `"METHOD /template"`, matched against requests in the order given."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._compiled: list[tuple[str, re.Pattern[str], str]] = []
        for key in keys:
            method, template = key.split(" ", 1)
            self._compiled.append((method, template_regex(template), key))
        self.keys = frozenset(key for _, _, key in self._compiled)

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def match(self, method: str, path: str) -> tuple[str | None, dict[str, str]]:
        """The first route for the request and its path parameters; (None, {}) for none."""
        for route_method, regex, key in self._compiled:
            found = regex.match(path)
            if route_method == method and found:
                return key, dict(zip(template_params(key), found.groups(), strict=True))
        return None, {}


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it; `path` is without the API's prefix."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int
    route: str | None


@dataclass(frozen=True)
class Routed:
    """A request whose route is known, for the stand-in to authenticate and answer."""

    method: str
    route: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


class RestStandIn(StandIn[Recorded]):
    """A REST API below `prefix`; a request outside it is matched as it is unless
    `prefix_required`. Faults are queued by route key. WEB_ROUTES answer pages outside the
    API ("METHOD /path", as a forge's sign-in flow), unrecorded."""

    NOT_FOUND: ClassVar[Any]  # the answer to a request no route matches
    WEB_ROUTES: ClassVar[Mapping[str, WebHandler]] = {}

    def __init__(
        self, routes: Iterable[str], prefix: str = "", *, prefix_required: bool = False
    ) -> None:
        self.routes = Routes(routes)
        self.prefix = prefix
        self.prefix_required = prefix_required
        super().__init__()

    @abstractmethod
    def fault_body(self, status: int) -> Any:
        """The provider's error document for a fault given without a body."""

    @abstractmethod
    def serve(self, call: Routed) -> Reply:
        """Authenticate the call and answer it with its route's handler."""

    def fail(
        self,
        route: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
        applied: bool = False,
    ) -> None:
        """Answer the next `times` calls to `route` ("METHOD /template") with `status` and
        `body` (JSON, or text where TEXT_BODIES says); by default the provider's error document.
        `applied`: each call takes effect before the fault answers it (a lost answer)."""
        if route not in self.routes:
            raise KeyError(f"no such route: {route}")
        body = self.fault_body(status) if body is None else body
        self._faults.queue(route, Fault(status, times, headers or {}, body, applied))

    def calls(self, route: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.route == route]

    def parse_body(self, raw: bytes) -> Any:
        return json.loads(raw) if raw else None

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw: bytes) -> Reply:
        """Record the request and answer it: status, JSON body and extra headers."""
        url = urlsplit(raw_path)
        web_route = self.WEB_ROUTES.get(f"{method} {url.path}")
        if web_route is not None:
            with self.lock:
                return web_route(self, web_params(raw_path, headers, raw), headers)
        path = url.path.removeprefix(self.prefix)
        query = parse_qs(url.query)
        body = self.parse_body(raw)
        with self.lock:
            routable = path != url.path or not self.prefix_required
            route, params = self.routes.match(method, path) if routable else (None, {})
            reply: Reply = (
                (404, self.NOT_FOUND, {})
                if route is None
                else self._answer(Routed(method, route, params, query, headers, body))
            )
            self.requests.append(Recorded(method, path, query, headers, body, reply[0], route))
            return reply

    def _answer(self, call: Routed) -> Reply:
        fault = self._faults.take(call.route)
        if fault is None:
            return self.serve(call)
        if fault.applied:
            self.serve(call)
        return fault.status, fault.body, fault.headers


# --- Web pages and forms: a forge's sign-in flow, outside its REST API ------------------------


@dataclass(frozen=True)
class Text:
    """An answer in a content type of its own: an HTML page, a form-encoded token."""

    body: str
    content_type: str


def html_page(status: int, title: str, text: str) -> Reply:
    """A minimal HTML page, the way a browser is shown one."""
    head, title = "<!DOCTYPE html><html><head><title>", escape(title)
    body = f"{head}{title}</title></head><body><h1>{title}</h1><p>{escape(text)}</p></body></html>"
    return status, Text(body, "text/html; charset=utf-8"), {}


def redirect(location: str) -> Reply:
    """A 302 to `location`, with the link Rails writes in its body."""
    body = f'<html><body>You are being <a href="{escape(location)}">redirected</a>.</body></html>'
    return 302, Text(body, "text/html; charset=utf-8"), {"Location": location}


def with_query(url: str, params: dict[str, str]) -> str:
    """`url` with `params` added after the query it already has."""
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit(parts._replace(query=query))


def web_params(raw_path: str, headers: dict[str, str], raw: bytes) -> dict[str, str]:
    """A request's parameters: its query, then its form-encoded or JSON body over it."""
    params = dict(parse_qsl(urlsplit(raw_path).query))
    if "json" in headers.get("content-type", ""):
        body = json.loads(raw or b"{}")
        fields = body.items() if isinstance(body, dict) else []
        return params | {k: v for k, v in fields if isinstance(v, str)}
    return params | dict(parse_qsl(raw.decode()))


def basic_credentials(headers: dict[str, str]) -> tuple[str, str] | None:
    """The client id and secret of HTTP Basic auth, each form-encoded first as RFC 6749 2.3.1
    says; None without Basic auth. https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1"""
    scheme, _, encoded = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded, validate=True).decode()
    except ValueError:  # not base64, or not UTF-8: credentials that match no client
        return "", ""
    client_id, _, secret = decoded.partition(":")
    return unquote_plus(client_id), unquote_plus(secret)
