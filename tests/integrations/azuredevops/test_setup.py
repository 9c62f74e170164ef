"""`resolver setup azuredevops` registers one Web Hooks subscription per routed event on the
stand-in, through the generic set-up code: each sends a new password and secret header, which
the vault keeps and the webhook then verifies with; a plain-http public URL is refused and
changes nothing. `resolver doctor`'s checks say what the bot can do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import pytest
import typer
from typer.testing import CliRunner

from integrations.azuredevops.hooks import HOOK_EVENTS
from integrations.azuredevops.preflight import checks
from integrations.azuredevops.settings import AzureDevOpsSettings
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.state import Repo
from integrations.azuredevops.verify import verify_delivery
from resolver.cli.setup import add_provider_commands
from resolver.contract.checks import PreflightScope
from resolver.contract.inbound import secret_value
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from resolver.store import configured
from tests.conftest import ResolverEnv, reset_caches
from tests.integrations.azuredevops.conftest import BOT_TOKEN, REPO
from tests.integrations.azuredevops.deliveries import headers_for
from tests.integrations.azuredevops.test_client import conforms
from tests.support.serving import served_answer


@pytest.fixture
def on_organisation(
    azure_api: AzureDevOpsAPI, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[AzureDevOpsAPI]:
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_URL", azure_api.url)
    monkeypatch.setenv("RESOLVER_PUBLIC_URL", "https://resolver.example")
    for name in ("PASSWORD", "HEADER_SECRET"):
        monkeypatch.delenv(f"RESOLVER_AZUREDEVOPS_WEBHOOK_{name}", raising=False)
    reset_caches()
    yield azure_api
    reset_caches()


def _stored() -> AzureDevOpsSettings:
    configured.install()
    reset_caches()
    return AzureDevOpsSettings.of(get_settings())


def setup(*args: str) -> tuple[int, str]:
    app = typer.Typer()
    add_provider_commands(app)
    done = CliRunner().invoke(app, ["azuredevops", *args], input=BOT_TOKEN + "\n")
    return done.exit_code, done.output


def test_resolver_setup_azuredevops_subscribes_each_routed_event(
    resolver_env: ResolverEnv, on_organisation: AzureDevOpsAPI, repo: Repo
) -> None:
    code, output = setup("--repo", REPO)
    assert code == 0, output
    made = list(on_organisation.subscriptions.values())
    assert sorted(s.event_type for s in made) == sorted(e for e, _ in HOOK_EVENTS)
    inputs = made[0].consumer_inputs
    assert inputs["url"] == "https://resolver.example/webhooks/azuredevops"
    assert all(s.publisher_inputs["projectId"] == repo.project_id for s in made)
    assert {s.publisher_inputs.get("repository") for s in made} == {repo.id, None}
    stored = _stored()
    password = secret_value(stored.webhook_password)
    header = secret_value(stored.webhook_header_secret)
    assert password == inputs["basicAuthPassword"]
    assert inputs["httpHeaders"] == f"X-Resolver-Secret:{header}"
    assert password and header and BOT_TOKEN not in output and password not in output
    # What the subscriptions send is what the webhook accepts.
    verify_delivery(headers_for(password=password, header_secret=header), "resolver", password,
                    header)  # fmt: skip

    # Registering again re-keys the same subscriptions.
    code, output = setup("--repo", REPO)
    assert code == 0, output
    assert len(on_organisation.subscriptions) == len(HOOK_EVENTS)
    assert secret_value(_stored().webhook_password) != password
    conforms(on_organisation)


def test_a_plain_http_public_url_is_refused_and_changes_nothing(
    resolver_env: ResolverEnv,
    on_organisation: AzureDevOpsAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RESOLVER_PUBLIC_URL", "http://resolver.example")
    reset_caches()
    code, output = setup("--repo", REPO)
    assert code != 0 and "not HTTPS" in output
    assert on_organisation.subscriptions == {}
    assert secret_value(_stored().webhook_password) is None


def test_the_preflight_names_what_the_bot_can_do(
    resolver_env: ResolverEnv,
    on_organisation: AzureDevOpsAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_TOKEN", BOT_TOKEN)
    reset_caches()
    found = {c.name: c.status for c in checks(PreflightScope(get_settings(), (REPO,)))}
    assert found == {"azuredevops hooks": "ok", f"azuredevops access {REPO}": "ok"}
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_TOKEN", "not-a-token")
    monkeypatch.setenv("RESOLVER_PUBLIC_URL", "http://resolver.example")
    reset_caches()
    found = {c.name: c.status for c in checks(PreflightScope(get_settings(), (REPO,)))}
    assert found == {"azuredevops hooks": "fail", f"azuredevops access {REPO}": "fail"}


# One answer for every call: the repository's ids, then the subscriptions listed (`value`).
REPOSITORY: Final = '"id": "r1", "project": {"id": "p1"}'
LISTED: Final = '"eventType": "git.push", "publisherInputs": {"projectId": "p1"}'


@pytest.mark.parametrize(
    "subscription",
    [
        f'{{"id": null, {LISTED}, "consumerInputs": {{"url": "%s"}}}}',
        '{"id": "s1", "eventType": "git.push", "publisherInputs": "p1", '
        '"consumerInputs": {"url": "%s"}}',
        f'{{"id": "s1", {LISTED}, "consumerInputs": ["%s"]}}',
    ],
)
def test_a_subscription_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch, subscription: str
) -> None:
    monkeypatch.setenv("RESOLVER_PUBLIC_URL", "https://resolver.example")
    reset_caches()
    listed = subscription.replace("%s", hooks.webhook_url(get_settings(), "azuredevops"))
    with served_answer(f'{{{REPOSITORY}, "value": [{listed}]}}'.encode()) as organisation:
        monkeypatch.setenv("RESOLVER_AZUREDEVOPS_URL", organisation)
        reset_caches()
        unusable = "Azure DevOps's answer to GET hooks/subscriptions was unusable"
        with pytest.raises(SetupError, match=unusable):
            hooks.register_hook(get_settings(), "azuredevops", BOT_TOKEN, REPO)
    assert secret_value(_stored().webhook_password) is None
