"""Resolver's app (`resolver serve`) on a real HTTP server, uvicorn on a free loopback port,
for stand-ins that deliver to it and clients that call it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
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
