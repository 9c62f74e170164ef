"""The GitHub App from a manifest, below the web: against a GitHub Enterprise Server stand-in
(API under /api/v3), through `resolver setup github` (its one-shot local page, `--code`,
`--rotate-secret`), and the created App's key then minting installation tokens."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from typer.testing import CliRunner

from integrations.github import setup as github
from integrations.github.auth import installation_token, installation_tokens
from integrations.github.settings import GitHubSettings
from integrations.github.standin.api import GitHubAPI, conformance_problems
from resolver.cli import app as cli
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding.store import VaultStore
from resolver.store import configured
from resolver.store.db import session_scope
from tests.conftest import reset_caches
from tests.support.ports import free_port
from tests.web.setup_flow import create_on_github, form_to_github

PUBLIC_URL = "https://resolver.example.com"
INSTALLATION = 77


@pytest.fixture
def ghes(resolver_env, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubAPI]:
    """A GitHub Enterprise Server: its pages at the root, its REST API under /api/v3."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    api = GitHubAPI(app_id="1", public_key=pem, prefix="/api/v3")
    api.prefix_required = True  # nothing answers at the root, as on a real server
    api.add_installation(INSTALLATION)
    api.sign_in_as("root")
    for name, value in {
        "RESOLVER_GITHUB_API_URL": api.base_url,
        "RESOLVER_GITHUB_WEB_URL": api.web_url,
        "RESOLVER_PUBLIC_URL": PUBLIC_URL,
    }.items():
        monkeypatch.setenv(name, value)
    configured.install()
    reset_caches()
    installation_tokens.clear()
    yield api
    api.close()
    installation_tokens.clear()
    assert not conformance_problems(api.requests), conformance_problems(api.requests)


def code_from(api: GitHubAPI, redirect: str | None = None) -> str:
    started = github.start(get_settings(), None, "Resolver GHES", redirect=redirect)
    page = f'<form id="to-github" method="post" action="{started.url}">'
    page += f'<input name="manifest" value="{started.manifest.replace(chr(34), "&quot;")}">'
    location = create_on_github(*form_to_github(page))
    return httpx.URL(location).params["code"]


def finish(code: str) -> github.Finished:
    settings = get_settings()
    return github.finish(VaultStore(settings), settings, code)


def test_enterprise_server_gets_the_same_flow_at_its_own_addresses(ghes: GitHubAPI) -> None:
    started = github.start(get_settings(), "octo-org", None)
    assert started.url.startswith(f"{ghes.web_url}/organizations/octo-org/settings/apps/new?")
    finished = finish(code_from(ghes))
    (created,) = ghes.manifests.apps.values()
    assert len(ghes.calls("POST /app-manifests/{code}/conversions")) == 1
    assert finished.app.slug == created.slug == "resolver-ghes"
    assert finished.app.install_url == f"{ghes.web_url}/apps/resolver-ghes/installations/new"
    assert finished.env_wins == ()
    assert GitHubSettings.of(get_settings()).app_id == str(created.id)


def test_the_new_apps_key_mints_installation_tokens(ghes: GitHubAPI) -> None:
    finish(code_from(ghes))
    token = installation_token(INSTALLATION, get_settings())
    assert token in ghes.minted
    (claims,) = ghes.jwt_claims
    assert str(claims["iss"]) == GitHubSettings.of(get_settings()).app_id


def test_a_code_works_once(ghes: GitHubAPI) -> None:
    code = code_from(ghes)
    finish(code)
    with pytest.raises(SetupError, match="it works once, for an hour"):
        finish(code)


def test_a_code_expires_after_an_hour(ghes: GitHubAPI) -> None:
    code = code_from(ghes)
    ghes.manifests.clock = lambda: time.time() + 3601
    with pytest.raises(SetupError, match="it works once"):
        finish(code)
    with session_scope() as session:
        assert configured.stored_names(session) == {}


def test_an_unreachable_github_is_a_clear_error(ghes: GitHubAPI, monkeypatch) -> None:
    monkeypatch.setenv("RESOLVER_GITHUB_API_URL", f"http://127.0.0.1:{free_port()}/api/v3")
    reset_caches()
    with pytest.raises(SetupError, match="GitHub could not be reached"):
        finish("some-code")


def test_a_state_from_elsewhere_or_too_old_is_refused() -> None:
    kept = github.pending("the-state", 1000.0)
    assert github.state_ok(kept, "the-state", 1000.0 + 60)
    assert not github.state_ok(kept, "another", 1000.0 + 60)
    assert not github.state_ok(kept, "the-state", 1000.0 + github.STATE_SECONDS)
    assert not github.state_ok(None, "the-state", 1000.0)
    assert not github.state_ok(github.pending("", 1000.0), "", 1000.0)


def test_cli_serves_the_manifest_page_and_catches_the_redirect(ghes: GitHubAPI) -> None:
    port = free_port()
    result: list = []
    run = threading.Thread(
        target=lambda: result.append(
            CliRunner().invoke(cli, ["setup", "github", "--port", str(port)])
        )
    )
    run.start()
    page = None
    for _ in range(100):
        try:
            page = httpx.get(f"http://127.0.0.1:{port}/", trust_env=False)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    assert page is not None and page.status_code == 200
    action, manifest = form_to_github(page.text.replace('id="f"', 'id="to-github"'))
    location = create_on_github(action, manifest)
    assert location.startswith(f"http://127.0.0.1:{port}/done?code=")
    assert httpx.get(location, trust_env=False).status_code == 200
    run.join(30)
    (done,) = result
    assert done.exit_code == 0, done.output
    assert "created the GitHub App" in done.output
    (created,) = ghes.manifests.apps.values()
    assert created.webhook_secret not in done.output and created.client_secret not in done.output
    assert f"{PUBLIC_URL}/webhooks/github" == created.manifest["hook_attributes"]["url"]
    reset_caches()
    assert GitHubSettings.of(get_settings()).app_id == str(created.id)


def test_cli_claims_a_pasted_code_once_and_rotates_the_secret(ghes: GitHubAPI) -> None:
    runner = CliRunner()
    code = code_from(ghes)
    assert runner.invoke(cli, ["setup", "github", "--code", code]).exit_code == 0
    again = runner.invoke(cli, ["setup", "github", "--code", code])
    assert again.exit_code == 1 and "it works once" in again.output
    (created,) = ghes.manifests.apps.values()
    old = created.webhook_secret
    rotated = runner.invoke(cli, ["setup", "github", "--rotate-secret"])
    assert rotated.exit_code == 0, rotated.output
    assert created.webhook_secret != old and created.webhook_secret not in rotated.output
    reset_caches()
    secret = GitHubSettings.of(get_settings()).webhook_secret
    assert secret is not None and secret.get_secret_value() == created.webhook_secret


def test_cli_refuses_a_bad_organisation_before_listening(ghes: GitHubAPI) -> None:
    done = CliRunner().invoke(cli, ["setup", "github", "--org", "-octo"])
    assert done.exit_code == 1
    assert "is not a GitHub account or organisation name" in " ".join(done.output.split())
    assert not ghes.manifests.posted


def test_cli_prints_the_operators_link_to_setup(ghes: GitHubAPI) -> None:
    done = CliRunner().invoke(cli, ["setup", "url"])
    assert done.exit_code == 0
    assert done.stdout.startswith(f"{PUBLIC_URL}/setup/start/")
