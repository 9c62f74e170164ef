"""/setup: an admin creates the GitHub App from a manifest on the GitHub stand-in; its id, key
and secrets land in the vault (encrypted, in no file), and webhooks then verify with the new
secret; the secret rotates; everyone else sees nothing."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.github.app_manifest import EVENTS, PERMISSIONS
from integrations.github.settings import GitHubSettings
from integrations.github.standin.api import GitHubAPI, conformance_problems
from resolver.core.settings import get_settings
from resolver.store import configured
from resolver.store.db import session_scope
from resolver.store.models import StoredSetting
from tests.support.llm_server import error, scripted_llm
from tests.web.conftest import PUBLIC_URL, browser, csrf_of, sign_in
from tests.web.setup_flow import (
    come_back,
    create_app,
    create_on_github,
    flash_of,
    form_to_github,
    ping,
    send_manifest,
)

FIVE = (
    "github_app_id",
    "github_app_private_key",
    "github_webhook_secret",
    "github_client_id",
    "github_client_secret",
)


@pytest.fixture
def admin(app, forge: GitHubAPI):
    client = browser(app)
    sign_in(client, forge, "root", "/setup")
    yield client
    assert not conformance_problems(forge.requests), conformance_problems(forge.requests)


def stored() -> dict[str, str]:
    with session_scope() as session:
        return {row.name: row.ciphertext for row in session.scalars(select(StoredSetting))}


def test_the_manifest_names_exactly_the_permissions_events_and_our_urls(admin) -> None:
    sent = send_manifest(admin, name="Resolver test")
    action, text = form_to_github(sent.text)
    manifest = json.loads(text)
    assert action.startswith(
        f"{GitHubSettings.of(get_settings()).web_url}/settings/apps/new?state="
    )
    assert manifest["default_permissions"] == PERMISSIONS
    assert manifest["default_events"] == list(EVENTS)
    assert manifest["name"] == "Resolver test"
    assert manifest["url"] == PUBLIC_URL
    assert manifest["hook_attributes"]["url"] == f"{PUBLIC_URL}/webhooks/github"
    assert manifest["redirect_url"] == f"{PUBLIC_URL}/setup/github/done"
    assert manifest["callback_urls"] == [f"{PUBLIC_URL}/signin/github/done"]
    assert manifest["public"] is False
    assert manifest["request_oauth_on_install"] is False


def test_the_urls_in_the_manifest_are_routes_of_the_app(app) -> None:
    paths = {getattr(route, "path", "") for route in app.routes}
    assert {"/webhooks/github", "/setup/github/done", "/signin/{forge}/done"} <= paths


def test_an_organisation_owns_the_app_when_named(admin, forge: GitHubAPI) -> None:
    sent = send_manifest(admin, owner="org", organisation="octo-org")
    action, manifest = form_to_github(sent.text)
    assert "/organizations/octo-org/settings/apps/new?state=" in action
    assert come_back(admin, create_on_github(action, manifest)).status_code == 303
    (created,) = forge.manifests.apps.values()
    assert created.owner == "octo-org"


@pytest.mark.parametrize("organisation", ["-octo", "octo_org", "a" * 40, "octo--org", ""])
def test_a_bad_organisation_is_refused_and_nothing_is_sent(admin, organisation: str) -> None:
    answer = send_manifest(admin, owner="org", organisation=organisation)
    assert answer.status_code == 303
    flash = flash_of(admin)
    assert "nothing was sent" in flash or "Name the organisation" in flash


def test_creating_the_app_keeps_all_five_values_encrypted_in_the_vault(
    admin, forge: GitHubAPI, resolver_env
) -> None:
    back = create_app(admin)
    assert back.status_code == 303 and back.headers["location"] == "/setup"
    (created,) = forge.manifests.apps.values()
    page = admin.get("/setup").text
    assert f"Created the GitHub App {created.slug}" in page
    assert f"{forge.web_url}/apps/{created.slug}/installations/new" in page
    for secret in (created.private_pem, created.webhook_secret, created.client_secret):
        assert secret not in page
    rows = stored()
    assert set(FIVE) <= set(rows)
    key_line = created.private_pem.splitlines()[1]
    files = [p.read_text(errors="ignore") for p in Path(resolver_env.tmp).rglob("*") if p.is_file()]
    for secret in (key_line, created.webhook_secret, created.client_secret):
        assert secret not in "".join(rows.values())
        assert not any(secret in text for text in files)  # in no file, the database included
    settings = get_settings()
    assert GitHubSettings.of(settings).app_id == str(created.id)
    assert GitHubSettings.of(settings).webhook_secret is not None
    assert GitHubSettings.of(settings).webhook_secret.get_secret_value() == created.webhook_secret


def test_the_environment_still_wins_and_the_page_says_so(admin, forge: GitHubAPI) -> None:
    create_app(admin)
    flash = flash_of(admin)
    # The web conftest sets the sign-in client in the environment.
    assert "RESOLVER_GITHUB_CLIENT_ID, RESOLVER_GITHUB_CLIENT_SECRET" in flash
    assert "win over the stored ones" in flash
    page = admin.get("/setup").text
    assert "environment (wins over the vault)" in page
    assert GitHubSettings.of(get_settings()).client_id == "Iv1.web-test"


def test_webhooks_verify_with_the_new_secret_only(admin, forge: GitHubAPI) -> None:
    create_app(admin)
    (created,) = forge.manifests.apps.values()
    assert ping(admin, created.webhook_secret).status_code == 204
    assert ping(admin, "an-old-or-made-up-secret").status_code == 401


def test_a_state_that_is_not_this_sessions_is_refused_and_nothing_is_stored(
    admin, forge: GitHubAPI
) -> None:
    sent = send_manifest(admin)
    location = create_on_github(*form_to_github(sent.text))
    forged = location.replace("state=", "state=x")
    assert come_back(admin, forged).status_code == 303
    assert "nothing was stored" in flash_of(admin)
    assert not stored()
    # Its state was used up: the real answer no longer counts either.
    come_back(admin, location)
    assert not stored()


def test_an_answer_without_a_manifest_sent_is_refused(admin) -> None:
    answer = admin.get("/setup/github/done", params={"code": "abc", "state": "abc"})
    assert answer.status_code == 303
    assert "nothing was stored" in flash_of(admin)
    assert not stored()


def test_a_used_code_is_a_clear_error(admin, forge: GitHubAPI) -> None:
    sent = send_manifest(admin)
    location = create_on_github(*form_to_github(sent.text))
    come_back(admin, location)
    again = send_manifest(admin)
    _, state = form_to_github(again.text)[0].split("state=")
    code = location.split("code=")[1].split("&")[0]
    answer = admin.get("/setup/github/done", params={"code": code, "state": state})
    assert answer.status_code == 303
    assert "it works once, for an hour" in flash_of(admin)


def test_rotating_the_secret_changes_it_at_github_and_here(admin, forge: GitHubAPI) -> None:
    create_app(admin)
    (created,) = forge.manifests.apps.values()
    old = created.webhook_secret
    answer = admin.post("/setup/github/rotate", data={"csrf": csrf_of(admin, "/setup")})
    assert answer.status_code == 303
    assert "refused from now on" in flash_of(admin)
    assert created.webhook_secret != old and len(created.webhook_secret) >= 32
    (call,) = forge.calls("PATCH /app/hook/config")
    assert call.body == {"secret": created.webhook_secret}
    assert ping(admin, created.webhook_secret).status_code == 204
    assert ping(admin, old).status_code == 401


def test_rotation_is_refused_while_the_environment_sets_the_secret(
    admin, forge: GitHubAPI, monkeypatch
) -> None:
    create_app(admin)
    monkeypatch.setenv("RESOLVER_GITHUB_WEBHOOK_SECRET", "from-the-environment")
    configured.changed()
    admin.post("/setup/github/rotate", data={"csrf": csrf_of(admin, "/setup")})
    assert "set in the environment" in flash_of(admin)
    assert not forge.calls("PATCH /app/hook/config")


def test_a_form_without_its_csrf_token_changes_nothing(admin, forge: GitHubAPI) -> None:
    assert admin.post("/setup/github/manifest", data={"owner": "personal"}).status_code == 403
    assert admin.post("/setup/github/rotate", data={"csrf": "nope"}).status_code == 403
    assert not forge.calls("PATCH /app/hook/config")


def test_only_admins_see_setup(app, forge: GitHubAPI) -> None:
    anonymous = browser(app)
    assert anonymous.get("/setup").status_code == 303
    nick = browser(app)
    sign_in(nick, forge, "nick")
    assert nick.get("/setup").status_code == 404
    csrf = csrf_of(nick, "/jobs")
    assert nick.post("/setup/github/manifest", data={"csrf": csrf}).status_code == 404
    assert nick.post("/setup/github/rotate", data={"csrf": csrf}).status_code == 404
    assert nick.get("/setup/github/done", params={"code": "x", "state": "y"}).status_code == 404
    assert not stored()


def test_the_checks_run_from_the_page_and_say_what_to_fix(
    admin, app, forge: GitHubAPI, monkeypatch
) -> None:
    weak = "password1234"
    monkeypatch.setenv("RESOLVER_GITHUB_WEBHOOK_SECRET", weak)
    configured.changed()
    page = admin.post("/setup/checks", data={"csrf": csrf_of(admin, "/setup")})
    assert page.status_code == 200, page.text
    assert "RESOLVER_GITHUB_WEBHOOK_SECRET is weak" in page.text and weak not in page.text
    assert "resolver doctor" in page.text
    stranger = browser(app)
    sign_in(stranger, forge, "rita")
    refused = stranger.post("/setup/checks", data={"csrf": csrf_of(stranger, "/jobs")})
    assert refused.status_code == 404
    assert admin.post("/setup/checks", data={"csrf": "forged"}).status_code == 403


def test_the_llm_key_from_the_environment_is_masked_in_the_checks_page(admin, monkeypatch) -> None:
    """A gateway's refusal that quotes the key, in a shape no pattern knows: the web process
    runs no job, which was the only place the settings' secrets were masked."""
    key = "corpgw-" + secrets.token_hex(12)
    with scripted_llm([error(400, f"key {key} is not allowed to use this model")]) as llm:
        monkeypatch.setenv("RESOLVER_LLM_MODEL", "openai/gpt-4o-mini")
        monkeypatch.setenv("RESOLVER_LLM_API_KEY", key)
        monkeypatch.setenv("RESOLVER_LLM_BASE_URL", llm.base_url)
        configured.changed()
        page = admin.post("/setup/checks", data={"csrf": csrf_of(admin, "/setup")})
    assert page.status_code == 200, page.text
    assert "key ****** is not allowed to use this model" in page.text
    assert key not in page.text
