"""The GitHub App's preflight against the GitHub stand-in, whose deliveries reach Resolver's own
app on a real port: what an admin sees in `resolver doctor` and on `/setup`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from integrations.github import setup as github_setup
from integrations.github.standin.api import GitHubAPI
from resolver.contract.checks import Check
from resolver.contract.setup import SetupError
from resolver.core.settings import Settings
from resolver.onboarding.preflight import provider_checks
from resolver.onboarding.store import VaultStore
from tests.onboarding.conftest import APP_ID, stored, strong_secret
from tests.support.serving import served_answer

OTHERS_OFF = {
    "gitlab_webhook_token": None,
    "gitlab_signing_token": None,
    "slack_signing_secret": None,
    "jira_webhook_secret": None,
    "linear_webhook_secret": None,
}


def github_checks(settings: Settings) -> dict[str, Check]:
    return {c.name: c for c in provider_checks(settings) if c.name.startswith("github")}


@pytest.fixture
def setup(
    configure: Callable[..., Settings],
    github_api: GitHubAPI,
    receiver: str,
    app_key: tuple[str, str],
    tmp_path: Path,
) -> Callable[..., Settings]:
    """An App installed as `/setup` creates it: its webhook to the receiver, one secret on both
    sides, and one delivery (the ping GitHub sends when an App's webhook is set)."""
    key = tmp_path / "app.pem"
    key.write_text(app_key[0])
    secret = strong_secret()
    github_api.app.hook.url = f"{receiver}/webhooks/github"
    github_api.app.hook.secret = secret

    def apply(**values: Any) -> Settings:
        return configure(
            **OTHERS_OFF
            | {
                "github_api_url": github_api.base_url,
                "github_web_url": github_api.web_url,
                "github_app_id": APP_ID,
                "github_app_private_key_path": str(key),
                "github_webhook_secret": secret,
                "public_url": receiver,
                "llm_model": None,
            }
            | values
        )

    apply()
    github_api.app.deliver("ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
    return apply


def test_a_fully_set_up_app_passes_every_check(
    setup: Callable[..., Settings], github_api: GitHubAPI
) -> None:
    checks = github_checks(setup())

    assert {name: c.status for name, c in checks.items()} == {
        "github app": "ok",
        "github app permissions": "ok",
        "github app events": "ok",
        "github webhook": "ok",
        "github test delivery": "ok",
        "github secret RESOLVER_GITHUB_WEBHOOK_SECRET": "ok",
    }
    assert "was accepted (HTTP 204)" in checks["github test delivery"].detail
    first, again = github_api.app.deliveries
    assert (again.guid, again.redelivery, again.status_code) == (first.guid, True, 204)


def test_a_missing_permission_and_event_are_named_with_where_to_fix_them(
    setup: Callable[..., Settings], github_api: GitHubAPI
) -> None:
    github_api.app.permissions["contents"] = "read"
    del github_api.app.permissions["issues"]
    github_api.app.events.remove("pull_request_review")

    checks = github_checks(setup())

    page = f"{github_api.web_url}/organizations/octo-org/settings/apps/resolver-test"
    assert checks["github app permissions"] == Check(
        "github app permissions",
        "fail",
        f"grant Contents: write, Issues: write in the App settings at {page}/permissions, then "
        "accept the new permissions on each installation",
    )
    assert checks["github app events"].status == "fail"
    assert "subscribe to pull_request_review " in checks["github app events"].detail


def test_a_wrong_private_key_says_so_and_stops(
    setup: Callable[..., Settings], tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    wrong = tmp_path / "wrong.pem"
    wrong.write_bytes(
        other.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )

    checks = github_checks(setup(github_app_private_key_path=str(wrong)))

    assert list(checks) == ["github app", "github secret RESOLVER_GITHUB_WEBHOOK_SECRET"]
    assert checks["github app"].status == "fail"
    assert checks["github app"].detail.startswith("the App id or private key is wrong: ")
    assert "401" in checks["github app"].detail


def test_a_webhook_pointing_elsewhere_is_named(
    setup: Callable[..., Settings], github_api: GitHubAPI, receiver: str
) -> None:
    github_api.app.hook.url = "https://old.example/hooks"
    github_api.app.hook.content_type = "form"

    check = github_checks(setup())["github webhook"]

    assert check.status == "fail"
    assert (
        f"set the webhook URL to {receiver}/webhooks/github (it is https://old.example/hooks)"
        in (check.detail)
    )
    assert "content type to application/json" in check.detail


def test_a_secret_that_differs_from_the_apps_fails_the_round_trip(
    setup: Callable[..., Settings], github_api: GitHubAPI
) -> None:
    here = strong_secret()
    check = github_checks(setup(github_webhook_secret=here))["github test delivery"]

    assert check.status == "fail"
    assert "got HTTP 401: the signature was refused" in check.detail
    assert here not in check.detail and github_api.app.hook.secret not in check.detail


def test_an_app_without_deliveries_asks_to_be_installed(
    setup: Callable[..., Settings], github_api: GitHubAPI
) -> None:
    github_api.app.deliveries.clear()

    check = github_checks(setup())["github test delivery"]

    assert check == Check(
        "github test delivery", "fail", "no delivery yet: install the App on a repository"
    )


@pytest.mark.parametrize(
    "answer", [b"[]", b'{"slug": "r", "owner": "me"}', b'{"slug": "r", "permissions": ["x"]}']
)
def test_an_app_answer_of_the_wrong_shape_is_a_failed_check_saying_so(
    setup: Callable[..., Settings], answer: bytes
) -> None:
    with served_answer(answer) as url:
        checks = github_checks(setup(github_api_url=url))

    assert checks["github app"].status == "fail"
    assert "GitHub's answer to GET /app was unusable" in checks["github app"].detail


@pytest.mark.parametrize(
    "answer",
    [
        b'{"id": null, "pem": null, "webhook_secret": null, "client_id": null, '
        b'"client_secret": null, "slug": null, "html_url": null}',
        b'{"id": 7, "pem": 5, "webhook_secret": "s", "client_id": "c", "client_secret": "t", '
        b'"slug": "r", "html_url": "https://github.example/apps/r"}',
    ],
)
def test_a_conversion_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    setup: Callable[..., Settings], answer: bytes
) -> None:
    with served_answer(answer, status=201) as url:
        settings = setup(github_api_url=url)
        with pytest.raises(SetupError, match="lacked the App's id, key or secrets"):
            github_setup.finish(VaultStore(settings), settings, "code-from-github")
    assert stored() == {}
