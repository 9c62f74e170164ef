"""The preflight of Jira and Linear against their stand-ins: the stored token works, and a
webhook to Resolver is registered with the events it acts on."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from integrations.jira.standin.api import JiraAPI
from integrations.linear.standin.api import LinearAPI
from resolver.contract.checks import Check
from resolver.core.settings import Settings
from resolver.onboarding.preflight import provider_checks
from tests.onboarding.conftest import strong_secret
from tests.onboarding.test_preflight import ALL_OFF, by_name, store_token
from tests.support.serving import served_answer

PUBLIC = "https://resolver.example"
JIRA_EVENTS = ["comment_created", "jira:issue_updated", "jira:issue_created"]


@pytest.fixture
def jira_api() -> Iterator[JiraAPI]:
    with JiraAPI() as api:
        bot = api.add_user("Resolver Bot")
        api.add_api_token("bot@example.com", "ATATT3x-preflight-token", bot)
        yield api


def jira_settings(configure: Callable[..., Settings], api: JiraAPI) -> Settings:
    settings = configure(
        **ALL_OFF
        | {"jira_webhook_secret": strong_secret(), "jira_url": api.site, "public_url": PUBLIC}
    )
    store_token("jira", api.site, "bot@example.com:ATATT3x-preflight-token", kind="pat")
    return settings


def test_jira_with_its_webhook_passes(
    configure: Callable[..., Settings], jira_api: JiraAPI
) -> None:
    url = f"{PUBLIC}/webhooks/jira"
    jira_api.listed_webhooks.append(
        {"name": "Resolver", "url": url, "events": JIRA_EVENTS, "enabled": True}
    )

    checks = by_name(provider_checks(jira_settings(configure, jira_api)))

    assert checks[f"jira token {jira_api.site}"].detail == "acts as Resolver Bot"
    assert checks[f"jira webhook {jira_api.site}"].status == "ok"
    assert "ATATT3x" not in repr(checks)


def test_jira_names_a_missing_webhook_and_a_missing_event(
    configure: Callable[..., Settings], jira_api: JiraAPI
) -> None:
    settings = jira_settings(configure, jira_api)
    name = f"jira webhook {jira_api.site}"
    assert by_name(provider_checks(settings))[name].detail.startswith(
        f"no webhook to {PUBLIC}/webhooks/jira: run `resolver setup jira`"
    )

    jira_api.listed_webhooks.append(
        {"name": "Resolver", "url": f"{PUBLIC}/webhooks/jira", "events": JIRA_EVENTS[:1]}
    )
    assert by_name(provider_checks(settings))[name] == Check(
        name,
        "fail",
        f"its webhook to {PUBLIC}/webhooks/jira needs work: add jira:issue_updated, "
        "jira:issue_created",
    )


def test_a_refused_jira_token_says_so(
    configure: Callable[..., Settings], jira_api: JiraAPI
) -> None:
    settings = jira_settings(configure, jira_api)
    jira_api.basic.clear()

    check = by_name(provider_checks(settings))[f"jira token {jira_api.site}"]

    assert check.status == "fail" and "answered 401" in check.detail


def test_a_webhook_list_of_the_wrong_shape_is_a_failed_check_saying_so(
    configure: Callable[..., Settings], jira_api: JiraAPI
) -> None:
    jira_api.listed_webhooks.append({"url": f"{PUBLIC}/webhooks/jira", "events": 7})

    checks = by_name(provider_checks(jira_settings(configure, jira_api)))

    assert checks[f"jira token {jira_api.site}"].status == "ok"
    check = checks[f"jira webhook {jira_api.site}"]
    assert check.status == "fail"
    assert "Jira's answer to GET /rest/webhooks/1.0/webhook was unusable" in check.detail


def test_a_page_served_for_the_token_check_is_a_failed_check_saying_so(
    configure: Callable[..., Settings],
) -> None:
    with served_answer(b"<html>maintenance</html>", content_type="text/html") as site:
        settings = configure(**ALL_OFF | {"jira_webhook_secret": strong_secret(),
                                          "jira_url": site, "public_url": PUBLIC})  # fmt: skip
        store_token("jira", site, "bot@example.com:ATATT3x-preflight-token", kind="pat")
        check = by_name(provider_checks(settings))[f"jira token {site}"]
    assert check.status == "fail"
    assert "answer to GET /rest/api/2/myself was unusable: JSONDecodeError" in check.detail


@pytest.fixture
def linear_api() -> Iterator[LinearAPI]:
    with LinearAPI() as api:
        bot = api.add_user("Resolver Bot")
        api.add_api_key("lin_api_preflight", bot)
        api.admins.add(bot.id)  # Linear lists webhooks to workspace admins only
        yield api


def linear_settings(configure: Callable[..., Settings], api: LinearAPI) -> Settings:
    values = {"linear_webhook_secret": strong_secret(), "linear_api_url": api.url}
    settings = configure(**ALL_OFF | values | {"public_url": PUBLIC})
    store_token("linear", "org-1", "lin_api_preflight", kind="pat")
    return settings


def test_linear_with_its_webhook_passes(
    configure: Callable[..., Settings], linear_api: LinearAPI
) -> None:
    linear_api.add_webhook(f"{PUBLIC}/webhooks/linear", ["Comment", "Issue"])

    checks = by_name(provider_checks(linear_settings(configure, linear_api)))

    assert checks["linear token org-1"] == Check("linear token org-1", "ok", "acts as Resolver Bot")
    assert checks["linear webhook org-1"].status == "ok"


@pytest.mark.parametrize(
    "data",
    [
        b'{"viewer": [], "webhooks": {"nodes": []}}',
        b'{"viewer": {"name": "Bot"}, "webhooks": []}',
        b'{"viewer": {"name": "Bot"}, "webhooks": {"nodes": ["x"]}}',
        b'{"viewer": {"name": "Bot"}, "webhooks": {"nodes": [{"url": "%s", "resourceTypes": 7}]}}',
    ],
)
def test_a_linear_answer_of_the_wrong_shape_is_a_failed_check_saying_so(
    configure: Callable[..., Settings], data: bytes
) -> None:
    answer = b'{"data": %s}' % data.replace(b"%s", f"{PUBLIC}/webhooks/linear".encode())
    with served_answer(answer) as url:
        values = {"linear_webhook_secret": strong_secret(), "linear_api_url": url}
        settings = configure(**ALL_OFF | values | {"public_url": PUBLIC})
        store_token("linear", "org-1", "lin_api_preflight", kind="pat")
        check = by_name(provider_checks(settings))["linear token org-1"]
    assert check.status == "fail"
    assert "Linear's answer to Preflight was unusable" in check.detail


def test_linear_names_a_disabled_webhook(
    configure: Callable[..., Settings], linear_api: LinearAPI
) -> None:
    linear_api.add_webhook(f"{PUBLIC}/webhooks/linear", ["Comment", "Issue"], enabled=False)

    check = by_name(provider_checks(linear_settings(configure, linear_api)))["linear webhook org-1"]

    assert check.detail == f"its webhook to {PUBLIC}/webhooks/linear needs work: enable it"
