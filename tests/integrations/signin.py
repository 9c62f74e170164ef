"""What the stand-ins' sign-in tests share: the web app the forges and identity providers send a
person back to, and the steps its sign-in and proof take, over HTTP (Authlib's OAuth2Client) or
in a browser (Chromium, driven by Playwright)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from authlib.integrations.httpx_client import OAuth2Client
from playwright.sync_api import Browser

from integrations.standin.server import Loopback, LoopbackHandler

CLIENT_ID, SECRET = "Iv1.8a61f9b3a7aba766", "app-secret-" + "5e" * 10
# A web app's sign-in callback; its own query survives the forge's redirect.
CALLBACK = "http://127.0.0.1:8000/auth/callback?next=%2Fjobs"
ALICE_ID = 583231
# Where the web app's account proof (Slack, Atlassian, Linear) comes back to.
PROOF_CALLBACK = "http://127.0.0.1:8000/prove/done"


def sign_in(
    http: httpx.Client, client: OAuth2Client, authorize_url: str, token_url: str
) -> tuple[str, Any]:
    """Send the browser to the forge, follow its redirect back, trade the code: the location
    the forge redirected to and the token."""
    url, _ = client.create_authorization_url(authorize_url)
    back = http.get(url)
    assert back.status_code == 302, back.text
    location = back.headers["location"]
    return location, client.fetch_token(token_url, authorization_response=location)


def location_of(authorize: httpx.Response) -> dict[str, list[str]]:
    assert authorize.status_code == 302, authorize.text
    return parse_qs(urlsplit(authorize.headers["location"]).query)


def proof_client(scope: str, **extra: Any) -> OAuth2Client:
    """The web app's account proof, as an OAuth client."""
    return OAuth2Client(
        CLIENT_ID,
        SECRET,
        redirect_uri=PROOF_CALLBACK,
        scope=scope,
        token_endpoint_auth_method="client_secret_post",
        trust_env=False,
        **extra,
    )


# What scripts/browser prints: Debian's Chromium, which Playwright drives.
CHROMIUM = Path(os.environ.get("RESOLVER_TEST_CHROMIUM") or "/usr/lib/chromium/chromium")


class CallbackPage(LoopbackHandler):
    """The web app's callback page, on an origin of its own."""

    def answer(self) -> None:
        page = b"<!DOCTYPE html><html><head><title>Signed in</title></head></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


def browser_sign_in(
    browser: Browser, client: OAuth2Client, authorize_url: str, token_url: str
) -> Any:
    """A person's browser goes to the forge, which sends it on to the app's callback page with
    a code; the app trades the code for a token."""
    with Loopback(CallbackPage) as app, client, browser.new_page() as page:
        client.redirect_uri = f"{app.origin}/auth/callback?next=%2Fjobs"
        url, state = client.create_authorization_url(authorize_url)
        page.goto(url)
        assert page.title() == "Signed in"
        query = parse_qs(urlsplit(page.url).query)
        assert (query["next"], query["state"]) == (["/jobs"], [state])
        return client.fetch_token(token_url, authorization_response=page.url)
