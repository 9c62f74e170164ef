"""`/setup/slack/create` pressed twice (a double click, two tabs, or again before the app is
installed) creates one Slack app: the second press is sent to the first's app to install it,
rather than creating another that holds our webhook URL at Slack while the vault forgets it.
On SQLite and PostgreSQL, through the app, with the Slack stand-in."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from integrations.github.standin.api import GitHubAPI
from integrations.slack.standin import apps
from integrations.slack.standin.apps import SlackAppsAPI
from tests.onboarding.conftest import stored
from tests.onboarding.test_slack_app import slack_api, web  # noqa: F401 (fixtures)
from tests.web.conftest import browser, csrf_of, sign_in

# Long enough for the second press to reach its check while the first waits on Slack.
WIDENED = 0.5


def _tabs(web, forge: GitHubAPI) -> tuple[list[TestClient], str]:  # noqa: F811
    """Two tabs of root's one session (an admin), and its CSRF token."""
    first = browser(web)
    sign_in(first, forge, "root")
    second = browser(web)
    second.cookies.update(first.cookies)
    return [first, second], csrf_of(first, "/jobs")


def _press(tab: TestClient, token: str, csrf: str) -> str:
    answer = tab.post("/setup/slack/create", data={"csrf": csrf, "config_token": token})
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


def _client_of(install_url: str) -> str:
    return parse_qs(urlsplit(install_url).query)["client_id"][0]


def _slowed_create(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack takes a while to create the app: the second press arrives meanwhile."""
    real = apps.APP_METHODS["apps.manifest.create"]

    def slow(*args: Any) -> Any:
        time.sleep(WIDENED)
        return real(*args)

    monkeypatch.setitem(apps.APP_METHODS, "apps.manifest.create", slow)


@pytest.mark.parametrize("widened", [False, True], ids=["natural", "widened"])
def test_create_pressed_twice_at_once_creates_one_app(
    web,  # noqa: F811
    forge: GitHubAPI,
    slack_api: SlackAppsAPI,  # noqa: F811
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    widened: bool,
) -> None:
    tabs, csrf = _tabs(web, forge)
    token, _ = slack_api.add_config_token()
    if widened:
        _slowed_create(monkeypatch)
    start = threading.Barrier(2)

    def press(tab: TestClient) -> str:
        start.wait()
        return _press(tab, token, csrf)

    with ThreadPoolExecutor(2) as pool:
        sent_to = list(pool.map(press, tabs))
    (app,) = slack_api.apps.values()
    assert [_client_of(url) for url in sent_to] == [app.client_id] * 2
    assert stored()["slack_app_id"] == app.app_id


def test_create_again_before_the_install_leads_to_the_app_and_after_it_creates_another(
    web,  # noqa: F811
    forge: GitHubAPI,
    slack_api: SlackAppsAPI,  # noqa: F811
) -> None:
    [tab, _], csrf = _tabs(web, forge)
    token, _ = slack_api.add_config_token()
    first = _press(tab, token, csrf)
    again = _press(tab, token, csrf)
    (app,) = slack_api.apps.values()
    assert _client_of(again) == _client_of(first) == app.client_id

    approved = httpx.get(again, follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    assert tab.get(f"{back.path}?{back.query}").headers["location"] == "/setup"
    later = _press(tab, token, csrf)
    assert len(slack_api.apps) == 2 and _client_of(later) != app.client_id
    assert stored()["slack_client_id"] == _client_of(later)
