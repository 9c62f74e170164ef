"""/setup in a real browser (Debian's Chromium through Playwright): an admin signs in with
GitHub, creates the GitHub App from a manifest on the stand-in and comes back; deliveries signed
with the App's new webhook secret are then accepted by the running server, and one signed with
another secret is refused. The server's environment sets no webhook secret (it would win)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, sync_playwright

from integrations.github.standin.api import GitHubAPI
from tests.e2e.test_browser import (
    chromium,
    publish_screenshot,
    refused_by_csp,
    screenshot,
)
from tests.integrations.deliveries import github, load
from tests.support.ports import free_port
from tests.support.procs import start, stop, wait_until

CLIENT_ID, CLIENT_SECRET = "Iv1.setup-test", "setup-test-secret"
ROOT_ID = 7001


@pytest.fixture
def chrome() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        # As root, Chromium's own sandbox cannot start; the pages here are our own.
        found = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield found
        found.close()


@pytest.fixture
def server(resolver_env, github_api: GitHubAPI) -> Iterator[str]:
    """`resolver serve` with GitHub sign-in for the admin `root`, and no webhook secret."""
    port = free_port()
    web = f"http://127.0.0.1:{port}"
    github_api.add_oauth_app(CLIENT_ID, CLIENT_SECRET)
    env = resolver_env.child_env(
        RESOLVER_PUBLIC_URL=web,
        RESOLVER_GITHUB_API_URL=github_api.base_url,
        RESOLVER_GITHUB_WEB_URL=github_api.web_url,
        RESOLVER_GITHUB_CLIENT_ID=CLIENT_ID,
        RESOLVER_GITHUB_CLIENT_SECRET=CLIENT_SECRET,
        RESOLVER_ADMINS=f"github:id:{ROOT_ID}",
    )
    for name in ("RESOLVER_GITHUB_WEBHOOK_SECRET", "RESOLVER_GITHUB_APP_ID"):
        env.pop(name, None)
    args = ("-m", "resolver.cli", "serve", "--host", "127.0.0.1", "--port", str(port))
    proc = start(env, resolver_env.tmp / "web.log", *args)

    def up() -> bool:
        try:
            return httpx.get(f"{web}/healthz", trust_env=False).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, 120, "the web server")
        yield web
    finally:
        stop(proc)


def ping(web: str, secret: str) -> int:
    delivery = github("ping", load("github", "ping__app_hook"), secret=secret)
    answer = httpx.post(
        web + delivery.path, content=delivery.body, headers=delivery.headers, trust_env=False
    )
    return answer.status_code


def test_an_admin_creates_the_github_app_and_its_secret_is_the_one_that_verifies(
    github_api: GitHubAPI, server: str, chrome: Browser
) -> None:
    assert ping(server, "the-old-secret") == 404  # no secret anywhere: GitHub's webhook is off
    github_api.sign_in_as("root", user_id=ROOT_ID)
    page = chrome.new_page(viewport={"width": 1000, "height": 1200})
    refused = refused_by_csp(page)
    page.goto(f"{server}/setup")
    page.get_by_role("link", name="Sign in with GitHub").click()
    page.wait_for_url(f"{server}/setup")
    assert "not configured" in page.inner_text("#setup-github h2")

    page.get_by_label("App name").fill("Resolver browser test")
    page.get_by_role("button", name="Create GitHub App").click()
    page.wait_for_url(f"{github_api.web_url}/settings/apps/new?state=*")  # GitHub's page
    assert page.get_by_label("GitHub App name").input_value() == "Resolver browser test"
    page.get_by_role("button", name="Create GitHub App").click()
    page.wait_for_url(f"{server}/setup")

    (created,) = github_api.manifests.apps.values()
    text = page.inner_text("main")
    assert f"Created the GitHub App {created.slug}" in text
    assert "configured" in page.inner_text("#setup-github h2")
    install = page.get_by_role("link", name="Install it")
    assert (
        install.get_attribute("href")
        == f"{github_api.web_url}/apps/{created.slug}/installations/new"
    )
    for secret in (created.webhook_secret, created.client_secret, created.private_pem[40:80]):
        assert secret not in page.content()
    assert refused == [], "the manifest form may post to GitHub, and its script is no inline one"
    screenshot(page, "setup-page.png", height=1600)

    assert ping(server, created.webhook_secret) == 204
    assert ping(server, "the-old-secret") == 401
    publish_screenshot("setup-page.png")


def test_another_site_cannot_frame_a_page(server: str, chrome: Browser) -> None:
    page = chrome.new_page()
    refused = refused_by_csp(page)
    page.set_content(f'<iframe src="{server}/signin"></iframe>')
    page.wait_for_timeout(1000)
    assert any("frame-ancestors" in text for text in refused), refused
    assert "Sign in" not in page.frames[-1].content()
