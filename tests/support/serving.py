"""Resolver's app (`resolver serve`) on a real HTTP server, uvicorn on a free loopback port,
for stand-ins that deliver to it and clients that call it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import uvicorn


@contextmanager
def served_app() -> Iterator[str]:
    """The app as the current settings make it; yields its URL, and stops it after."""
    from resolver.app import create_app

    config = uvicorn.Config(create_app(), host="127.0.0.1", port=0, log_config=None)
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    while not runner.started:
        if not thread.is_alive():
            pytest.fail("the server did not start")
        threading.Event().wait(0.01)
    port = runner.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        runner.should_exit = True
        thread.join(timeout=10)


@contextmanager
def served_handler(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """A plain `http.server` handler on a free loopback port, each request in a thread of its
    own; yields the server's URL (no trailing slash), and stops it after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def served_answer(
    body: bytes,
    status: int = 200,
    content_type: str = "application/json",
    headers: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """A server that gives every request (any method, any path) the same answer, as a hostile
    or broken provider would; yields its URL (no trailing slash)."""

    class Answer(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        def log_message(self, *_args: object) -> None:
            return None

    with served_handler(Answer) as url:
        yield url


class Flood:
    """What a flooding server sent: the bytes written before the client hung up."""

    def __init__(self) -> None:
        self.sent = 0


@contextmanager
def served_flood(status: int, size: int) -> Iterator[tuple[str, Flood]]:
    """A server that answers every GET with `status` and a body of `size` bytes of text, sent
    a chunk at a time (nothing that large is held); yields its URL and what it sent."""
    flood, chunk = Flood(), b"x" * 65_536

    class Flooding(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                while flood.sent < size:
                    self.wfile.write(chunk)
                    flood.sent += len(chunk)
            except OSError:  # the client read what it wanted and hung up
                return

        def log_message(self, *_args: object) -> None:
            return None

    with served_handler(Flooding) as url:
        yield url, flood


class EchoProxy(BaseHTTPRequestHandler):
    """An HTTP proxy that answers every GET itself, with the URL it was asked for (`asked`) in
    a JSON object that is also an empty key set (`keys`): what a client sent through it."""

    def do_GET(self) -> None:
        body = json.dumps({"keys": [], "asked": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return None
