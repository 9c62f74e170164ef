"""The manifest flow as a browser walks it, for the /setup tests: Resolver's page POSTs the
manifest to the GitHub stand-in, the admin presses Create there, GitHub sends them back."""

from __future__ import annotations

import json
import re
from html import unescape
from urllib.parse import urlsplit

import httpx
from starlette.testclient import TestClient

from tests.integrations.deliveries import github, load, post
from tests.web.conftest import csrf_of


def send_manifest(client: TestClient, **form: str) -> httpx.Response:
    """Press "Create GitHub App" on /setup."""
    fields = {"csrf": csrf_of(client, "/setup"), "owner": "personal", **form}
    return client.post("/setup/github/manifest", data=fields)


def form_to_github(page: str) -> tuple[str, str]:
    """The go page's form: where it POSTs, and the manifest (JSON text)."""
    action = re.search(r'<form id="to-github" method="post" action="([^"]+)"', page)
    manifest = re.search(r'name="manifest" value="([^"]*)"', page)
    assert action and manifest, page
    return unescape(action.group(1)), unescape(manifest.group(1))


def create_on_github(action: str, manifest: str, name: str | None = None) -> str:
    """GitHub's page, then its Create button; the URL GitHub sends the browser back to."""
    shown = httpx.post(action, data={"manifest": manifest}, trust_env=False)
    assert shown.status_code == 200, shown.text
    assert json.loads(manifest)["name"] in unescape(shown.text)
    state = dict(httpx.URL(action).params)["state"]
    fields = {"manifest": manifest, "state": state, "create": "1"}
    fields["name"] = name or json.loads(manifest)["name"]
    created = httpx.post(action, data=fields, trust_env=False, follow_redirects=False)
    assert created.status_code == 302, created.text
    return created.headers["location"]


def come_back(client: TestClient, location: str) -> httpx.Response:
    back = urlsplit(location)
    return client.get(f"{back.path}?{back.query}")


def create_app(client: TestClient, **form: str) -> httpx.Response:
    """The whole flow: the answer to GitHub's redirect back."""
    sent = send_manifest(client, **form)
    assert sent.status_code == 200, sent.text
    return come_back(client, create_on_github(*form_to_github(sent.text)))


def ping(client: TestClient, secret: str) -> httpx.Response:
    """GitHub's ping to the App's webhook, signed with `secret`."""
    return post(client, github("ping", load("github", "ping__app_hook"), secret=secret))


def flash_of(client: TestClient) -> str:
    page = client.get("/setup")
    found = re.search(r'<p class="flash" role="status">(.*?)</p>', page.text, re.S)
    return unescape(found.group(1)) if found else ""
