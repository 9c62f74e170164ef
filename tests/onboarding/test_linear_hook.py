"""`resolver setup linear`: `webhookCreate` with exactly the routed resource types and a
generated secret, kept in the vault; Linear's signed deliveries pass our ingress, and after
`webhookUpdate` with a new secret the old one's are refused."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from integrations.linear.routes import ROUTES
from integrations.linear.standin.api import LinearAPI
from integrations.linear.standin.webhooks import Webhook, deliver
from resolver.cli.setup import app as setup_app
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from tests.onboarding.conftest import Live, ciphertexts, stored
from tests.support.serving import served_answer

ADMIN_KEY = "lin_api_admin0123456789abcdef"
MEMBER_KEY = "lin_api_member0123456789abcdef"


@pytest.fixture
def linear(live: Live, monkeypatch: pytest.MonkeyPatch) -> Iterator[LinearAPI]:
    api = LinearAPI()
    admin, member = api.add_user("Ada Admin"), api.add_user("Bob Member")
    api.add_api_key(ADMIN_KEY, admin)
    api.add_api_key(MEMBER_KEY, member)
    api.admins.add(admin.id)
    live.set(monkeypatch, linear_api_url=api.url)
    yield api
    api.close()


def _only(api: LinearAPI) -> Webhook:
    assert len(api.webhooks) == 1
    found: Webhook = next(iter(api.webhooks.values()))
    return found


def test_the_webhook_takes_the_routed_types_and_its_deliveries_pass(
    linear: LinearAPI, live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    result = hooks.register_hook(get_settings(), "linear", ADMIN_KEY)
    webhook = _only(linear)
    assert webhook.url == f"{live.url}/webhooks/linear" and result.created
    assert sorted(webhook.resource_types) == sorted({key.split(".")[0] for key in ROUTES})
    assert webhook.all_public_teams and webhook.team_id is None
    assert stored() == {"linear_webhook_secret": webhook.secret}
    assert all(webhook.secret not in c for c in ciphertexts())
    assert deliver(webhook) in (200, 202, 204)
    assert deliver(webhook, secret="not-the-secret") == 401
    assert webhook.secret not in caplog.text and ADMIN_KEY not in caplog.text


def test_rotation_refuses_the_old_secret_and_accepts_the_new(linear: LinearAPI) -> None:
    hooks.register_hook(get_settings(), "linear", ADMIN_KEY, "team-0001")
    webhook = _only(linear)
    old = webhook.secret
    assert webhook.team_id == "team-0001"
    again = hooks.register_hook(get_settings(), "linear", ADMIN_KEY, rotate=True)
    assert _only(linear) is webhook and not again.created and webhook.secret != old
    assert deliver(webhook, secret=old) == 401
    assert deliver(webhook) in (200, 202, 204)
    assert linear.calls("webhookUpdate"), "updated in place, not created again"


def test_a_member_is_refused_and_nothing_is_stored(linear: LinearAPI) -> None:
    with pytest.raises(SetupError, match="workspace admin"):
        hooks.register_hook(get_settings(), "linear", MEMBER_KEY)
    with pytest.raises(SetupError, match="refused the API key"):
        hooks.register_hook(get_settings(), "linear", "lin_api_wrong")
    assert linear.webhooks == {} and stored() == {}


def test_the_cli_prints_no_secret(linear: LinearAPI) -> None:
    done = CliRunner().invoke(setup_app, ["linear"], input=ADMIN_KEY + "\n")
    assert done.exit_code == 0, done.output
    assert "stored in the vault: linear_webhook_secret" in done.output
    assert _only(linear).secret not in done.output and ADMIN_KEY not in done.output


@pytest.mark.parametrize(
    "answer",
    [
        b'{"data": []}',
        b'{"data": "x"}',
        b'{"data": {"webhooks": {"nodes": [5]}}}',
        b'{"data": {"webhooks": {"nodes": []}, "webhookCreate": {"success": true, '
        b'"webhook": {"id": null, "secret": null}}}}',
    ],
)
def test_an_answer_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    live: Live, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    with served_answer(answer) as url:
        live.set(monkeypatch, linear_api_url=url)
        with pytest.raises(SetupError, match=r"Linear's answer to \w+ was unusable"):
            hooks.register_hook(get_settings(), "linear", ADMIN_KEY)
    assert stored() == {}
