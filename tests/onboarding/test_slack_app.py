"""`resolver setup slack` and the `/setup` Slack buttons: the app is created from the manifest
with exactly the README's scopes and events, its credentials go to the vault, the install keeps
the workspace's bot token, and Slack's signed requests pass our ingress with the new signing
secret (and, after a rotation, not with the old one)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Route
from starlette.testclient import TestClient
from typer.testing import CliRunner

from integrations.github.standin.api import GitHubAPI
from integrations.slack import setup as slack
from integrations.slack.app_manifest import BOT_EVENTS, BOT_SCOPES
from integrations.slack.standin.apps import SlackAppsAPI
from integrations.slack.standin.state import TEAM_ID
from resolver.cli.setup import app as setup_app
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding.store import VaultStore
from resolver.store.secrets import stored_token
from resolver.web.session import middleware_options
from resolver.web.setup_providers import pages
from tests.conftest import reset_caches
from tests.onboarding.conftest import ciphertexts, stored
from tests.web.conftest import browser, csrf_of, sign_in

PUBLIC_URL = "http://testserver"


@pytest.fixture
def slack_api(forge: GitHubAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlackAppsAPI]:
    api = SlackAppsAPI()
    monkeypatch.setenv("RESOLVER_SLACK_API_URL", api.base_url)
    monkeypatch.setenv("RESOLVER_SLACK_WEB_URL", api.web_url)
    reset_caches()
    yield api
    api.close()


@pytest.fixture
def web(slack_api: SlackAppsAPI):
    """Resolver's app with the `/setup` provider routes mounted as the web app mounts its own."""
    from resolver.app import create_app

    app = create_app()
    session = [Middleware(SessionMiddleware, **middleware_options(get_settings()))]
    for path, endpoint, methods in pages():
        app.router.routes.append(Route(path, endpoint, methods=methods, middleware=session))
    return app


def _create_app(token: str, refresh: str | None = None) -> slack.CreatedSlackApp:
    settings = get_settings()
    return slack.create_app(VaultStore(settings), settings, token, refresh)


def _signed(secret: str, body: bytes) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def _challenge(client: TestClient, secret: str) -> int:
    """Slack's URL verification of the event URL, signed with `secret`."""
    body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"}).encode()
    answer = client.post("/webhooks/slack", content=body, headers=_signed(secret, body))
    assert answer.status_code != 200 or answer.json() == {"challenge": "c-123"}
    return answer.status_code


def test_the_manifest_names_exactly_the_scopes_and_events_and_the_vault_keeps_the_rest(
    slack_api: SlackAppsAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token, _ = slack_api.add_config_token()
    created = _create_app(token)
    (app,) = slack_api.apps.values()
    manifest = app.manifest
    assert manifest["oauth_config"]["scopes"] == {"bot": list(BOT_SCOPES)}
    assert manifest["oauth_config"]["redirect_urls"] == [f"{PUBLIC_URL}/setup/slack/installed"]
    events = manifest["settings"]["event_subscriptions"]
    assert events == {"request_url": f"{PUBLIC_URL}/webhooks/slack", "bot_events": list(BOT_EVENTS)}
    assert manifest["settings"]["org_deploy_enabled"] is False
    assert manifest["settings"]["socket_mode_enabled"] is False
    assert stored() == {
        "slack_signing_secret": app.signing_secret,
        "slack_app_id": app.app_id,
        "slack_client_id": app.client_id,
        "slack_client_secret": app.client_secret,
    }
    assert all(app.client_secret not in c and app.signing_secret not in c for c in ciphertexts())
    query = parse_qs(urlsplit(created.install_url).query)
    assert query["client_id"] == [app.client_id] and query["scope"] == [",".join(BOT_SCOPES)]
    for secret in (token, app.client_secret, app.signing_secret):
        assert secret not in caplog.text


def test_an_expired_token_is_rotated_with_its_refresh_token(slack_api: SlackAppsAPI) -> None:
    token, refresh = slack_api.add_config_token()
    slack_api.expire(token)
    with pytest.raises(SetupError, match="expired"):
        _create_app(token)
    assert stored() == {} and slack_api.apps == {}
    created = _create_app(token, refresh)
    assert created.rotated_config_token and len(slack_api.apps) == 1
    assert [c.status for c in slack_api.calls("tooling.tokens.rotate")] == [200]


def test_a_bad_token_is_refused_and_nothing_is_stored(slack_api: SlackAppsAPI) -> None:
    with pytest.raises(SetupError, match="refused the app configuration token"):
        _create_app("xoxe.xoxp-1-not-a-token")
    with pytest.raises(SetupError, match="no Slack app yet"):
        slack.install_url(get_settings())
    assert stored() == {} and slack_api.apps == {}


def test_a_token_no_header_can_carry_is_refused_before_any_call(slack_api: SlackAppsAPI) -> None:
    for pasted in ("xoxe.xoxp-\uff11", "xoxe.xoxp-1 2", "xoxe.xoxp-\u00e91"):
        with pytest.raises(SetupError, match="not an app configuration token"):
            _create_app(pasted)
    assert slack_api.calls("apps.manifest.create") == [] and stored() == {}


def test_an_admin_creates_and_installs_the_app_and_its_requests_pass(
    web,
    forge: GitHubAPI,
    slack_api: SlackAppsAPI,
) -> None:
    client = browser(web)
    sign_in(client, forge, "root")
    token, _ = slack_api.add_config_token()
    csrf = csrf_of(client, "/jobs")
    created = client.post("/setup/slack/create", data={"csrf": csrf, "config_token": token})
    assert created.status_code == 303, created.text
    approved = httpx.get(created.headers["location"], follow_redirects=False, trust_env=False)
    assert approved.status_code == 302, approved.text
    back = urlsplit(approved.headers["location"])
    assert back.path == "/setup/slack/installed"
    done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 303 and done.headers["location"] == "/setup"
    (app,) = slack_api.apps.values()
    assert stored_token("slack", installation=TEAM_ID, settings=get_settings()) == app.installs[0]
    assert _challenge(client, app.signing_secret) == 200
    assert _challenge(client, "0" * 32) == 401
    replay = client.get(f"{back.path}?{back.query}")
    assert replay.status_code == 303, "a used code is refused with a message, not stored twice"
    assert len(app.installs) == 1


def test_rotating_the_signing_secret_refuses_the_old_one(
    web,
    forge: GitHubAPI,
    slack_api: SlackAppsAPI,
) -> None:
    token, _ = slack_api.add_config_token()
    _create_app(token)
    (app,) = slack_api.apps.values()
    client = browser(web)
    sign_in(client, forge, "root")
    new = "f" * 32
    csrf = csrf_of(client, "/jobs")
    rotated = client.post("/setup/slack/rotate", data={"csrf": csrf, "signing_secret": new})
    assert rotated.status_code == 303 and rotated.headers["location"] == "/setup"
    assert _challenge(client, app.signing_secret) == 401
    assert _challenge(client, new) == 200


def test_only_admins_with_the_form_token_may_set_up(
    web,
    forge: GitHubAPI,
    slack_api: SlackAppsAPI,
) -> None:
    token, _ = slack_api.add_config_token()
    client = browser(web)
    sign_in(client, forge, "nick")
    csrf = csrf_of(client, "/jobs")
    refused = client.post("/setup/slack/create", data={"csrf": csrf, "config_token": token})
    assert refused.status_code == 403
    hook = client.post("/setup/gitlab/hook", data={"csrf": csrf, "credential": "x"})
    assert hook.status_code == 403
    admin = browser(web)
    sign_in(admin, forge, "root")
    forged = admin.post("/setup/slack/create", data={"csrf": "forged", "config_token": token})
    assert forged.status_code == 403
    assert slack_api.apps == {} and stored() == {}


def test_the_cli_creates_the_app_and_prints_the_install_link_but_no_secret(
    slack_api: SlackAppsAPI,
) -> None:
    token, refresh = slack_api.add_config_token()
    done = CliRunner().invoke(setup_app, ["slack"], input=f"{token}\n{refresh}\n")
    assert done.exit_code == 0, done.output
    (app,) = slack_api.apps.values()
    assert f"created Slack app {app.app_id}" in done.output
    assert "/oauth/v2/authorize?" in done.output.replace("\n", "")
    for secret in (token, refresh, app.client_secret, app.signing_secret):
        assert secret not in done.output
    bad = CliRunner().invoke(setup_app, ["slack", "--rotate"], input="not a secret\n")
    assert bad.exit_code == 1 and "Basic Information" in bad.output
