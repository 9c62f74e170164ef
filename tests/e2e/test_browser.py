"""The web app in a real browser: Debian's Chromium driven by Playwright (`executable_path`;
nothing is downloaded). A person signs in through GitHub's web flow, watches a running job's
steps arrive without a reload, presses Stop and sees the job end as cancelled, in the page and
in its status comment; someone who cannot read the repository gets a 404."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from tests.e2e.github_flow import ALICE_ID, github_settings, mention, widgets
from tests.e2e.stack import Stack, by_step, running_stack
from tests.support.llm_server import finish, tool
from tests.support.ports import free_port
from tests.support.procs import start

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "var" / "artifacts"
# The screenshots the documentation site shows (docs/*.md): the browser tests take them.
DOCS_IMAGES = ROOT / "docs" / "images"
CLIENT_ID, CLIENT_SECRET = "Iv1.browser-test", "browser-test-secret"


def screenshot(page: Page, name: str, *, height: int | None = None) -> None:
    """The page as the test sees it, into var/artifacts/NAME: the viewport, or the whole page
    up to `height` CSS pixels (a PNG of a modest size for the site)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if height is None:
        page.screenshot(path=str(ARTIFACTS / name))
        return
    width = page.viewport_size["width"] if page.viewport_size else 1000
    tall = page.evaluate("document.documentElement.scrollHeight")
    clip = {"x": 0, "y": 0, "width": width, "height": min(height, tall)}
    page.screenshot(path=str(ARTIFACTS / name), full_page=True, clip=clip)


def publish_screenshot(name: str) -> None:
    """Once the test that took it has passed: with RESOLVER_UPDATE_SCREENSHOT set, the
    screenshot replaces the site's copy in docs/images/ when its bytes differ. Unset (the
    default, as in `make test`), the tree is left alone, so a run never dirties git."""
    taken, shown = ARTIFACTS / name, DOCS_IMAGES / name
    if not os.environ.get("RESOLVER_UPDATE_SCREENSHOT"):
        return
    if not shown.exists() or shown.read_bytes() != taken.read_bytes():
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copy(taken, shown)


def chromium() -> str:
    """Debian's Chromium, as `scripts/browser` found it for `make test`."""
    path = os.environ.get("RESOLVER_TEST_CHROMIUM") or "/usr/lib/chromium/chromium"
    if not Path(path).exists():
        pytest.fail("Chromium is missing: run the suite with `make test` (scripts/browser)")
    return path


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        # As root, Chromium's own sandbox cannot start; the pages here are our own.
        found = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield found
        found.close()


def slow_steps() -> list:
    """Enough steps, slowly enough, to watch them arrive and to stop the job among them."""
    steps = [tool("execute_bash", command=f"echo step {n}") for n in range(1, 30)]
    return [*steps, finish("answered", "done")]


def serve(stack: Stack, port: int) -> None:
    proc = start(
        stack.child_env(),
        stack.tmp / "web.log",
        "-m",
        "resolver.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    )
    stack.procs.append(proc)

    def up() -> bool:
        import httpx

        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", trust_env=False).status_code == 200
        except httpx.HTTPError:
            return False

    stack.wait(up, 120, "the web server")


def refused_by_csp(page: Page) -> list[str]:
    """What the page's Content Security Policy refuses from now on (an inline script or style,
    a form sent elsewhere, a frame), as Chromium reports each in the console."""
    found: list[str] = []

    def seen(text: str) -> None:
        if "Content Security Policy" in text:
            found.append(text)

    page.on("console", lambda message: seen(message.text))
    return found


def sign_in_with_github(page: Page, api: GitHubAPI, login: str, user_id: int, url: str) -> None:
    api.sign_in_as(login, user_id=user_id)
    page.goto(url)
    page.get_by_role("link", name="Sign in with GitHub").click()
    page.wait_for_url(url)


def test_watch_a_job_and_stop_it(
    resolver_env, tmp_path, monkeypatch, github_api, git_server, key_file, browser
) -> None:
    port = free_port()
    web = f"http://127.0.0.1:{port}"
    repo, _ = widgets(github_api, git_server)
    repo.private = True
    github_api.add_oauth_app(CLIENT_ID, CLIENT_SECRET)
    settings = {
        **github_settings(github_api, key_file),
        "RESOLVER_PUBLIC_URL": web,
        "RESOLVER_GITHUB_WEB_URL": github_api.web_url,
        "RESOLVER_GITHUB_CLIENT_ID": CLIENT_ID,
        "RESOLVER_GITHUB_CLIENT_SECRET": CLIENT_SECRET,
    }
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.llm.set_script(by_step(slow_steps(), delay=1.0))
        serve(stack, port)
        job_id = mention(stack, monkeypatch, github_api, git_server)
        job_url = f"{web}/jobs/{job_id}"
        stack.wait(lambda: stack.job(job_id).state == "running", 120, "the job to start")

        page = browser.new_page(viewport={"width": 1000, "height": 900})
        refused = refused_by_csp(page)
        sign_in_with_github(page, github_api, "alice", ALICE_ID, job_url)
        page.wait_for_selector("#steps li.block-command")
        page.evaluate("window.loadedOnce = true")
        seen = page.locator("#steps li.block-command").count()
        # A selector, not wait_for_function: the page's CSP refuses the eval that one needs.
        page.wait_for_selector(f"#steps li.block-command >> nth={seen}", timeout=60_000)
        assert page.evaluate("window.loadedOnce") is True, "the steps came without a reload"
        screenshot(page, "job-page.png")

        page.get_by_role("button", name="Stop").click()
        page.wait_for_selector(".state-cancelled", timeout=90_000)
        assert "Cancelled" in page.content() or "cancelled" in page.inner_text("#job-head")
        assert stack.wait_finished(job_id).state == "cancelled"

        def cancelled_comment() -> bool:
            bodies = [c.body for c in github_api.comments.values() if c.login == BOT_LOGIN]
            return any("**Cancelled** by alice" in body for body in bodies)

        stack.wait(cancelled_comment, 60, "the status comment to say who stopped the job")

        page.set_viewport_size({"width": 390, "height": 800})  # a phone
        for url in (job_url, f"{web}/jobs"):
            page.goto(url)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, url
        assert refused == [], "the live page, its steps and its buttons work under the CSP"

        stranger = browser.new_page()
        sign_in_with_github(stranger, github_api, "mallory", 6006, job_url)
        assert "Not found" in stranger.content()
        assert stranger.goto(job_url).status == 404
    publish_screenshot("job-page.png")
