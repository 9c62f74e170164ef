"""`resolver setup jira`: an admin webhook with exactly the routed events and a generated secret,
kept in the vault; Jira's signed deliveries pass our ingress, and after a rotation the old
secret's are refused."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from integrations.jira.routes import ROUTES
from integrations.jira.standin.webhooks import JiraWebhooksAPI, Webhook
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from tests.onboarding.conftest import Live, ciphertexts, stored
from tests.support.serving import served_answer

ADMIN = "ada@example.com:ATATT3x-admin-token-0123456789"
MEMBER = "bob@example.com:ATATT3x-member-token-0123456789"
COMMENT = "comment_created__wiki_markup.json"


@pytest.fixture
def jira(live: Live, monkeypatch: pytest.MonkeyPatch) -> Iterator[JiraWebhooksAPI]:
    api = JiraWebhooksAPI()
    for credential, admin in ((ADMIN, True), (MEMBER, False)):
        email, _, token = credential.partition(":")
        user = api.add_user(email.split("@")[0].title())
        api.add_api_token(email, token, user)
        if admin:
            api.admins.add(user.account_id)
    live.set(monkeypatch, jira_url=api.site)
    yield api
    api.close()


def _only(api: JiraWebhooksAPI) -> Webhook:
    assert len(api.webhooks) == 1
    return next(iter(api.webhooks.values()))


def test_the_webhook_carries_the_routed_events_and_its_deliveries_pass(
    jira: JiraWebhooksAPI, live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    result = hooks.register_hook(get_settings(), "jira", ADMIN, "SP")
    webhook = _only(jira)
    assert webhook.url == f"{live.url}/webhooks/jira" and result.created
    assert sorted(webhook.events) == sorted(ROUTES)
    assert webhook.filters == {"issue-related-events-section": "project = SP"}
    assert webhook.secret and stored() == {"jira_webhook_secret": webhook.secret}
    assert all(webhook.secret not in c for c in ciphertexts())
    assert jira.deliver(webhook, COMMENT) in (200, 202, 204)
    assert jira.deliver(webhook, COMMENT, secret="not-the-secret") == 401
    assert webhook.secret not in caplog.text and ADMIN.split(":")[1] not in caplog.text


def test_rotation_refuses_the_old_secret_and_accepts_the_new(
    jira: JiraWebhooksAPI, live: Live
) -> None:
    hooks.register_hook(get_settings(), "jira", ADMIN)
    webhook = _only(jira)
    old = webhook.secret
    assert webhook.filters == {}, "no project: every project"
    again = hooks.register_hook(get_settings(), "jira", ADMIN, rotate=True)
    assert _only(jira) is webhook and not again.created and webhook.secret != old
    assert jira.deliver(webhook, COMMENT, secret=old) == 401
    assert jira.deliver(webhook, COMMENT) in (200, 202, 204)
    assert stored()["jira_webhook_secret"] == webhook.secret


def test_a_member_without_admin_rights_is_refused_and_nothing_is_stored(
    jira: JiraWebhooksAPI,
) -> None:
    with pytest.raises(SetupError, match="Administer Jira"):
        hooks.register_hook(get_settings(), "jira", MEMBER)
    with pytest.raises(SetupError, match="refused the credential"):
        hooks.register_hook(get_settings(), "jira", "ada@example.com:wrong")
    with pytest.raises(SetupError, match="not a Jira project key"):
        hooks.register_hook(get_settings(), "jira", ADMIN, "SP OR 1=1")
    assert jira.webhooks == {} and stored() == {}


@pytest.mark.parametrize(
    "answer",
    [b"<html>maintenance</html>", b"{}", b"[]", b"[5]", b'[{"url": "%s", "self": null}]'],
)
def test_an_answer_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    live: Live, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    with served_answer(answer.replace(b"%s", f"{live.url}/webhooks/jira".encode())) as site:
        live.set(monkeypatch, jira_url=site)
        unusable = r"Jira's answer to (GET|POST) /rest/webhooks/1.0/webhook was unusable"
        with pytest.raises(SetupError, match=unusable):
            hooks.register_hook(get_settings(), "jira", ADMIN)
    assert stored() == {}
