"""`resolver setup …`: set up providers from a shell, as `/setup` does in the browser.

`resolver setup github` creates the GitHub App from a manifest. GitHub takes the manifest only
as a browser form POST, so the command serves a one-shot page on 127.0.0.1 that sends it, and
catches GitHub's redirect back with the code. Where the browser cannot reach this machine,
copy the code from the address bar GitHub lands on and run `--code CODE`.
"""

from __future__ import annotations

import threading
from html import escape
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import NoReturn
from urllib.parse import parse_qs, urlsplit

import typer
from rich.console import Console

from integrations.github import setup as github
from resolver.cli import setup_hooks
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding.operator import OPERATOR_LINK_SECONDS, operator_url
from resolver.store import configured
from resolver.store.db import session_scope

console = Console()
app = typer.Typer(
    help=(
        "Set up providers: the operator's link to /setup, the GitHub App and the Slack app "
        "from manifests, the GitLab, Jira and Linear webhooks."
    ),
    no_args_is_help=True,
)


def fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


@app.command("url")
def setup_url() -> None:
    """Print a link that opens /setup as an admin, before anyone can sign in."""
    typer.echo(operator_url(get_settings()))
    typer.echo(f"(it works for {OPERATOR_LINK_SECONDS // 60} minutes)", err=True)


@app.command("github")
def setup_github(
    org: str | None = typer.Option(None, "--org", help="Organisation to own the App."),
    name: str | None = typer.Option(None, help='The App\'s name (default "Resolver (host)").'),
    code: str | None = typer.Option(None, help="Claim the App with the code GitHub sent back."),
    rotate_secret: bool = typer.Option(
        False,
        "--rotate",
        "--rotate-secret",
        help="Give the App a new webhook secret (at GitHub and here).",
    ),
    port: int = typer.Option(0, help="Port of the one-shot local page (0: any free port)."),
    wait: float = typer.Option(900.0, help="Seconds to wait for GitHub's redirect back."),
) -> None:
    """Create the GitHub App from a manifest (its id, key and secrets go to the vault)."""
    try:
        if rotate_secret:
            _rotate()
        elif code:
            _claim(code)
        else:
            _claim(_code_from_browser(org, name, port, wait))
    except SetupError as error:
        fail(str(error))


def _rotate() -> None:
    with session_scope() as session:
        github.rotate_webhook_secret(session, get_settings())
    configured.changed()
    console.print("changed the GitHub webhook secret at GitHub and in the vault")


def _claim(code: str) -> None:
    with session_scope() as session:
        finished = github.finish(session, get_settings(), code)
    configured.changed()
    app_ = finished.app
    console.print(f"created the GitHub App {app_.slug}; its id, key and secrets are in the vault")
    console.print(f"install it: {app_.install_url}")
    for field in finished.env_wins:
        console.print(f"note: RESOLVER_{field.upper()} is set in the environment and still wins")


class _Listener(HTTPServer):
    """Serves the page that POSTs the manifest, and waits for GitHub's redirect back."""

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.started: github.Start | None = None
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
            if not github.state_matches(started.state, query.get("state")):
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


def _form_page(started: github.Start) -> str:
    return (
        f'<form id="f" method="post" action="{escape(started.url)}">'
        f'<input type="hidden" name="manifest" value="{escape(started.manifest)}">'
        "<button>Create GitHub App</button></form>"
        '<script>document.getElementById("f").submit()</script>'
    )


def _code_from_browser(org: str | None, name: str | None, port: int, wait: float) -> str:
    listener = _Listener(port)
    try:
        listener.started = started = github.start(
            get_settings(), org, name, redirect=f"{listener.url}/done"
        )
        typer.echo(f"The manifest:\n{started.manifest}\n")
        typer.echo(f"GitHub takes it as a form POST to {started.url}")
        typer.echo(f"Open {listener.url}/ in a browser on this machine, signed in to GitHub,")
        typer.echo("and press Create. From elsewhere, forward the port (`ssh -L`) first, or copy")
        typer.echo("the code from the address GitHub ends on: `resolver setup github --code CODE`.")
        threading.Thread(target=listener.serve_forever, args=(0.1,), daemon=True).start()
        try:
            if not listener.done.wait(wait):
                raise SetupError(f"GitHub did not send the browser back within {wait:.0f} s")
        finally:
            listener.shutdown()
    finally:
        listener.server_close()
    return listener.code or ""


# Slack's app and the GitLab, Jira and Linear webhooks: `resolver setup slack|gitlab|jira|linear`.
app.registered_commands += setup_hooks.app.registered_commands
