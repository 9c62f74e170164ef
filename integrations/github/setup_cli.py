"""`resolver setup github` without a browser of Resolver's: the GitHub App from a manifest.

GitHub takes the manifest only as a browser form POST, so the command serves a one-shot page
on 127.0.0.1 that sends it, and catches GitHub's redirect back with the code. Where the browser
cannot reach this machine, copy the code from the address bar GitHub lands on and run
`--code CODE`.
"""

from __future__ import annotations

import hmac
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from resolver.contract.setup import SetupConsole, SetupError

if TYPE_CHECKING:
    from collections.abc import Callable

    from integrations.github.setup import Start


def state_matches(expected: str, returned: object) -> bool:
    """Compared in constant time; an empty state matches nothing."""
    if not expected or not isinstance(returned, str):
        return False
    return hmac.compare_digest(expected.encode(), returned.encode())


class _Listener(HTTPServer):
    """Serves the page that POSTs the manifest, and waits for GitHub's redirect back."""

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.started: Start | None = None
        self.code: str | None = None
        self.done = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Listener

    def do_GET(self) -> None:
        started, parts = self.server.started, urlsplit(self.path)
        assert started is not None
        if parts.path == "/":
            self._answer(200, _form_page(started))
        elif parts.path == "/done":
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            if not state_matches(started.state, query.get("state")):
                self._answer(400, "<p>This is not the answer to this command's manifest.</p>")
                return
            self.server.code = query.get("code", "")
            self._answer(200, "<p>Done: back to the terminal. You can close this tab.</p>")
            self.server.done.set()
        else:
            self._answer(404, "<p>Not found.</p>")

    def _answer(self, status: int, body: str) -> None:
        data = f"<!doctype html><title>Resolver setup</title>{body}".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the query holds the code."""


def _form_page(started: Start) -> str:
    return (
        f'<form id="f" method="post" action="{escape(started.url)}">'
        f'<input type="hidden" name="manifest" value="{escape(started.manifest)}">'
        "<button>Create GitHub App</button></form>"
        '<script>document.getElementById("f").submit()</script>'
    )


def code_from_browser(
    console: SetupConsole, begin: Callable[[str], Start], port: int, wait: float
) -> str:
    """Serve the page that POSTs the manifest `begin(redirect)` makes, and wait for GitHub to
    send the browser back to `redirect` with the code."""
    listener = _Listener(port)
    try:
        listener.started = started = begin(f"{listener.url}/done")
        _explain(console, started, listener.url)
        threading.Thread(target=listener.serve_forever, args=(0.1,), daemon=True).start()
        try:
            if not listener.done.wait(wait):
                raise SetupError(f"GitHub did not send the browser back within {wait:.0f} s")
        finally:
            listener.shutdown()
    finally:
        listener.server_close()
    return listener.code or ""


def _explain(console: SetupConsole, started: Start, local: str) -> None:
    console.say(f"The manifest:\n{started.manifest}\n")
    console.say(f"GitHub takes it as a form POST to {started.url}")
    console.say(f"Open {local}/ in a browser on this machine, signed in to GitHub,")
    console.say("and press Create. From elsewhere, forward the port (`ssh -L`) first, or copy")
    console.say("the code from the address GitHub ends on: `resolver setup github --code CODE`.")
