"""The preflight of Slack, GitLab, the webhook secrets and the LLM, each against its stand-in
(GitLab's test delivery reaches Resolver's own app on a real port)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from integrations.gitlab.standin.api import GitLabAPI
from integrations.slack.app_manifest import BOT_SCOPES
from integrations.slack.standin.api import TEAM_ID, SlackAPI
from resolver.contract.checks import Check
from resolver.core.settings import Settings, get_settings
from resolver.onboarding.preflight import provider_checks
from resolver.onboarding.strength import weakness
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.repo_defaults import set_route
from resolver.store.vault import Vault, store_credential
from tests.onboarding.conftest import strong_secret
from tests.support.llm_server import ScriptedLLMServer, error, scripted_llm, text
from tests.support.ports import free_port
from tests.support.serving import served_answer

ALL_OFF = {
    "github_webhook_secret": None,
    "gitlab_webhook_token": None,
    "gitlab_signing_token": None,
    "slack_signing_secret": None,
    "jira_webhook_secret": None,
    "linear_webhook_secret": None,
    "llm_model": None,
}
BOT_TOKEN = "xoxb-1-preflight-" + "7" * 24
GITLAB_TOKEN = "glpat-preflight-" + "4" * 20
LLM_KEY = "sk-proj-right-" + "9" * 30


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def store_token(provider: str, installation: str, token: str, kind: str = "bot") -> None:
    with session_scope() as session:
        owner = accounts.ensure_installation(session, provider, installation)
        vault = Vault(get_settings().fernet_keys)
        store_credential(
            session, vault, provider=provider, kind=kind, secret=token, installation_id=owner.id
        )


# --- webhook secrets


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("gh-test-secret", "14 characters"),
        ("x" * 32, "a repeated pattern"),
        ("abcdefghijklmnopqrstuvwxyz", "a sequence"),
        ("my-webhook-secret-2024-production", "made of common words"),
        ("aaaaaaaaaabbbbbbbbbbaaaaaaaaaabbbbbbbbbb", "too little entropy (about 40 bits)"),
    ],
)
def test_weak_secrets_are_named_by_why(value: str, reason: str) -> None:
    assert weakness(value) == reason


def test_generated_secrets_are_strong() -> None:
    for _ in range(200):
        assert weakness(strong_secret()) is None
    assert weakness("whsec_Z2l0bGFiLXNpZ25pbmcta2V5LTMyLWJ5dGVzLWxvbmc=") is None


def test_a_weak_secret_fails_with_its_fix_and_never_its_value(
    configure: Callable[..., Settings],
) -> None:
    settings = configure(**ALL_OFF | {"jira_webhook_secret": "jira-2024", "linear_webhook_secret":
                                      strong_secret()})  # fmt: skip

    checks = by_name(provider_checks(settings, offline=True))

    assert checks["jira secret RESOLVER_JIRA_WEBHOOK_SECRET"] == Check(
        "jira secret RESOLVER_JIRA_WEBHOOK_SECRET",
        "fail",
        "RESOLVER_JIRA_WEBHOOK_SECRET is weak (9 characters): rotate it with "
        "`resolver setup jira --rotate` or set a random value of 32+ characters",
    )
    assert checks["linear secret RESOLVER_LINEAR_WEBHOOK_SECRET"].status == "ok"
    assert "jira-2024" not in repr(checks)


# --- Slack


@pytest.fixture
def slack_api() -> Iterator[SlackAPI]:
    with SlackAPI() as api:
        yield api


def test_slack_with_every_scope_passes(
    configure: Callable[..., Settings], slack_api: SlackAPI
) -> None:
    slack_api.add_bot(BOT_TOKEN)
    settings = configure(
        **ALL_OFF | {"slack_signing_secret": strong_secret(), "slack_api_url": slack_api.base_url}
    )
    store_token("slack", TEAM_ID, BOT_TOKEN)

    checks = by_name(provider_checks(settings))

    assert checks[f"slack bot token {TEAM_ID}"] == Check(
        f"slack bot token {TEAM_ID}", "ok", "posts as @resolver in Resolver Test"
    )
    assert checks[f"slack scopes {TEAM_ID}"].status == "ok"
    assert BOT_TOKEN not in repr(checks)


def test_slack_names_a_missing_scope(
    configure: Callable[..., Settings], slack_api: SlackAPI
) -> None:
    granted = tuple(s for s in BOT_SCOPES if s != "reactions:write")
    slack_api.add_bot(BOT_TOKEN, scopes=granted)
    settings = configure(
        **ALL_OFF | {"slack_signing_secret": strong_secret(), "slack_api_url": slack_api.base_url}
    )
    store_token("slack", TEAM_ID, BOT_TOKEN)

    check = by_name(provider_checks(settings))[f"slack scopes {TEAM_ID}"]

    assert check == Check(
        f"slack scopes {TEAM_ID}",
        "fail",
        "missing reactions:write: add them under OAuth & Permissions, then reinstall the app in "
        "the workspace",
    )


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"[5]", "application/json"),
        (b'{"ok": true, "user": [], "team": "T"}', "application/json"),
        (b'{"ok": true, "team": "T"}', "application/json"),
        (b'{"ok": true, "user": "resolver", "team": null}', "application/json"),
        (b"<html><body>Sign in to the proxy</body></html>", "text/html"),
    ],
)
def test_a_slack_answer_of_the_wrong_shape_is_a_failed_check_saying_so(
    configure: Callable[..., Settings], body: bytes, content_type: str
) -> None:
    with served_answer(body, content_type=content_type, headers={"x-oauth-scopes": ""}) as url:
        values = {"slack_signing_secret": strong_secret(), "slack_api_url": url}
        settings = configure(**ALL_OFF | values)
        store_token("slack", TEAM_ID, BOT_TOKEN)
        check = by_name(provider_checks(settings))[f"slack bot token {TEAM_ID}"]
    assert check.status == "fail", check
    assert "Slack's answer to auth.test was unusable" in check.detail
    assert "refused" not in check.detail and "proxy" not in check.detail


def test_slack_without_a_stored_bot_token_says_how_to_store_one(
    configure: Callable[..., Settings],
) -> None:
    settings = configure(**ALL_OFF | {"slack_signing_secret": strong_secret()})

    check = by_name(provider_checks(settings))["slack bot token"]

    assert check.status == "fail" and "resolver tokens set --provider slack" in check.detail


# --- GitLab


@pytest.fixture
def gitlab_api() -> Iterator[GitLabAPI]:
    with GitLabAPI() as api:
        yield api


def gitlab_setup(
    configure: Callable[..., Settings], api: GitLabAPI, receiver: str, **events: bool
) -> tuple[Settings, str]:
    token = strong_secret()
    api.add_token(GITLAB_TOKEN, "resolver")
    project = api.add_project("group/widgets", clone_url="http://git.invalid/group/widgets.git")
    api.add_note(project, "issues", 7, "Hello world", "alice")
    needed = {
        "note_events": True,
        "confidential_note_events": True,
        "issues_events": True,
        "confidential_issues_events": True,
        "merge_requests_events": True,
        "pipeline_events": True,
    }
    api.add_hook(project, f"{receiver}/webhooks/gitlab", token=token, **needed | events)
    settings = configure(
        **ALL_OFF | {"gitlab_webhook_token": token, "gitlab_url": api.url, "public_url": receiver}
    )
    store_token("gitlab", api.url, GITLAB_TOKEN)
    with session_scope() as session:
        set_route(session, "slack", "C0GENERAL", "gitlab", "group/widgets")
    return settings, token


@pytest.mark.parametrize(
    ("answer", "check", "action"),
    [
        (b"<html>maintenance</html>", "gitlab token", "GET /user"),
        (b"{}", "gitlab token", "GET /user"),
        (b'{"id": 1, "username": null}', "gitlab token", "GET /user"),
        (b'{"id": 1, "username": "resolver"}', "gitlab webhook group/widgets", "GET /projects"),
    ],
)
def test_a_gitlab_answer_of_the_wrong_shape_is_a_failed_check_saying_so(
    configure: Callable[..., Settings], answer: bytes, check: str, action: str
) -> None:
    with served_answer(answer) as url:
        settings = configure(**ALL_OFF | {"gitlab_webhook_token": strong_secret(),
                                          "gitlab_url": url})  # fmt: skip
        store_token("gitlab", url, GITLAB_TOKEN)
        with session_scope() as session:
            set_route(session, "slack", "C0GENERAL", "gitlab", "group/widgets")
        found = by_name(provider_checks(settings))[check]
    assert found.status == "fail"
    assert f"GitLab's answer to {action}" in found.detail and "was unusable" in found.detail


def test_gitlab_hook_on_a_routed_project_round_trips(
    configure: Callable[..., Settings], gitlab_api: GitLabAPI, receiver: str
) -> None:
    settings, _ = gitlab_setup(configure, gitlab_api, receiver)

    checks = by_name(provider_checks(settings))

    assert checks["gitlab token"] == Check(
        "gitlab token", "ok", f"acts as @resolver on {gitlab_api.url}"
    )
    assert checks["gitlab webhook group/widgets"] == Check(
        "gitlab webhook group/widgets",
        "ok",
        f"a test note_events delivery to {receiver}/webhooks/gitlab was accepted",
    )
    (hook,) = gitlab_api.hooks.values()
    assert len(hook.received) == 1 and 200 <= hook.received[0] < 300


def test_gitlab_names_a_missing_event_and_a_refused_test(
    configure: Callable[..., Settings], gitlab_api: GitLabAPI, receiver: str
) -> None:
    settings, _ = gitlab_setup(configure, gitlab_api, receiver, merge_requests_events=False)
    assert "turn on merge_requests_events" in (
        by_name(provider_checks(settings))["gitlab webhook group/widgets"].detail
    )

    (hook,) = gitlab_api.hooks.values()
    hook.events["merge_requests_events"] = True
    hook.token = strong_secret()  # the hook's secret token differs from ours
    check = by_name(provider_checks(settings))["gitlab webhook group/widgets"]

    assert check.status == "fail"
    assert "failed (401 Unauthorized)" in check.detail
    assert "RESOLVER_GITLAB_WEBHOOK_TOKEN" in check.detail and hook.token not in check.detail


# --- the LLM


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    def answer(request: dict[str, Any]) -> Any:
        if request.get("model") != "scripted-model":
            model = request.get("model")
            return error(404, f"The model `{model}` does not exist", "model_not_found")
        return text("O", completion_tokens=1)

    with scripted_llm(answer, api_key=LLM_KEY) as server:
        yield server


def llm_settings(configure: Callable[..., Settings], server: ScriptedLLMServer, **values: str):
    return configure(
        **ALL_OFF
        | {"llm_model": "openai/scripted-model", "llm_base_url": server.base_url}
        | {"llm_api_key": LLM_KEY}
        | values
    )


def test_the_llm_answers_one_token(
    configure: Callable[..., Settings], llm: ScriptedLLMServer
) -> None:
    check = by_name(provider_checks(llm_settings(configure, llm)))["llm answers"]

    assert check == Check(
        "llm answers", "ok", "openai/scripted-model answered a one-token completion"
    )
    assert llm.requests[-1]["max_tokens"] == 1


def test_a_wrong_llm_key_is_refused_and_never_shown(
    configure: Callable[..., Settings], llm: ScriptedLLMServer
) -> None:
    wrong = "sk-proj-wrong-" + "3" * 30
    check = by_name(provider_checks(llm_settings(configure, llm, llm_api_key=wrong)))["llm answers"]

    assert check == Check(
        "llm answers", "fail", "RESOLVER_LLM_API_KEY is refused by openai: set a valid key"
    )
    assert wrong[-4:] not in check.detail


def test_an_unknown_model_is_named(
    configure: Callable[..., Settings], llm: ScriptedLLMServer
) -> None:
    settings = llm_settings(configure, llm, llm_model="openai/gpt-9-imaginary")

    check = by_name(provider_checks(settings))["llm answers"]

    assert check.status == "fail"
    assert check.detail.startswith(
        f"{llm.base_url} does not know the model 'openai/gpt-9-imaginary': fix RESOLVER_LLM_MODEL"
    )


def test_an_unreachable_llm_says_where(configure: Callable[..., Settings]) -> None:
    where = f"http://127.0.0.1:{free_port()}/v1"
    settings = configure(
        **ALL_OFF
        | {"llm_model": "openai/scripted-model", "llm_base_url": where}
        | {"llm_api_key": LLM_KEY}
    )

    check = by_name(provider_checks(settings))["llm answers"]

    assert check == Check(
        "llm answers",
        "fail",
        f"{where} cannot be reached for openai/scripted-model: check RESOLVER_LLM_BASE_URL and "
        "the network",
    )
