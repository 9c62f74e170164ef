"""Bitbucket's sign-in, set-up and preflight against the stand-in, as the descriptor names them:
the OAuth consumer, who a token is and what it may do on a repository; a repository or a
workspace hook registered with the routed events; the token and the bot's admin access
checked."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from cryptography.fernet import Fernet

from integrations import registry
from integrations.bitbucket import PROVIDER
from integrations.bitbucket.client import HOOK_EVENTS
from integrations.bitbucket.preflight import checks
from integrations.bitbucket.routes import ROUTES
from integrations.bitbucket.setup import SETUP, parse_scope
from integrations.bitbucket.signin import SIGN_IN
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Repo
from resolver.contract.checks import PreflightScope
from resolver.contract.setup import HookRequest, SetupError
from resolver.contract.signin import RefreshRefusedError
from resolver.core.settings import Settings
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO
from tests.support.serving import served_answer

ALICE, BOB, CAROL = "a1ice" * 8, "b0b" * 13, "car0l" * 8
KEY = Fernet.generate_key().decode()
HOOK_URL = "https://resolver.example/webhooks/bitbucket"
DONE = "https://resolver.example/signin/bitbucket/done"


def settings_for(api: BitbucketAPI, token: str = BOT_TOKEN, **more: object) -> Settings:
    values = {
        "bitbucket_api_url": api.api_url,
        "bitbucket_web_url": api.url,
        "bitbucket_token": token,
        "bitbucket_client_id": "consumer",
        "bitbucket_client_secret": "consumer-secret",
        "public_url": "https://resolver.example",
        "secret_keys": KEY,
    }
    return registry.settings(values | more, env_file=False)


@pytest.fixture
def people(bitbucket_api: BitbucketAPI, repo: Repo) -> BitbucketAPI:
    for token, nickname in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol")):
        bitbucket_api.add_token(token, nickname)
    return bitbucket_api


def test_the_registry_lists_bitbucket_as_a_forge_with_its_parts() -> None:
    assert registry.find("bitbucket") is PROVIDER and "bitbucket" in registry.forge_names()
    assert PROVIDER.sign_in is SIGN_IN and PROVIDER.setup is not None
    assert PROVIDER.setup() is SETUP
    assert PROVIDER.open_pulls is not None and PROVIDER.preflight is not None
    assert PROVIDER.resolve_thread is None and PROVIDER.ci_report is not None


def test_sign_in_is_an_oauth_consumer_on_the_web_address(bitbucket_api: BitbucketAPI) -> None:
    client = SIGN_IN.client(settings_for(bitbucket_api))
    assert client is not None and not client.secret_in_body
    assert client.authorize_url == f"{bitbucket_api.url}/site/oauth2/authorize"
    assert client.access_token_url == f"{bitbucket_api.url}/site/oauth2/access_token"
    unset = registry.settings({"secret_keys": KEY}, env_file=False)
    assert SIGN_IN.client(unset) is None


def test_the_person_and_their_access(people: BitbucketAPI) -> None:
    settings = settings_for(people)
    person = SIGN_IN.person(settings, ALICE)
    assert (person.provider, person.login) == ("bitbucket", "alice")
    assert person.external_id == people.add_user("alice")
    alice = SIGN_IN.access(settings, ALICE, REPO)
    bob = SIGN_IN.access(settings, BOB, REPO)
    carol = SIGN_IN.access(settings, CAROL, REPO)
    assert (alice.read, alice.push) == (True, True)
    assert (bob.read, bob.push) == (True, False)
    assert (carol.read, carol.push) == (False, False)  # a private repository
    assert not SIGN_IN.access(settings, ALICE, "not a repository").read


def test_signing_in_then_renewing_the_token(bitbucket_api: BitbucketAPI) -> None:
    bitbucket_api.oauth.add_consumer("consumer", "consumer-secret", DONE)
    bitbucket_api.oauth.signed_in = "alice"
    query = {"client_id": "consumer", "response_type": "code", "state": "s"}
    back = httpx.get(f"{bitbucket_api.url}/site/oauth2/authorize", params=query)
    assert back.headers["location"].startswith(DONE)
    code = httpx.URL(back.headers["location"]).params["code"]
    form = {"grant_type": "authorization_code", "code": code}
    auth = ("consumer", "consumer-secret")
    first = httpx.post(f"{bitbucket_api.url}/site/oauth2/access_token", data=form, auth=auth).json()
    settings = settings_for(bitbucket_api)
    renewed = SIGN_IN.refresh(settings, first["refresh_token"])
    assert renewed.access_token != first["access_token"]
    assert SIGN_IN.person(settings, renewed.access_token).login == "alice"
    with pytest.raises(RefreshRefusedError):
        SIGN_IN.refresh(settings, "never-issued")


def test_an_unknown_consumer_or_a_foreign_callback_is_a_page_not_a_redirect(
    bitbucket_api: BitbucketAPI,
) -> None:
    bitbucket_api.oauth.add_consumer("consumer", "consumer-secret", DONE)
    bitbucket_api.oauth.signed_in = "alice"
    for query in (
        {"client_id": "nobody", "response_type": "code"},
        {"client_id": "consumer", "response_type": "code", "redirect_uri": "https://evil.example"},
    ):
        page = httpx.get(f"{bitbucket_api.url}/site/oauth2/authorize", params=query)
        assert page.status_code == 400 and "location" not in page.headers


def test_the_hook_asks_for_every_cloud_event_routed() -> None:
    data_center = {key for key in ROUTES if key.startswith("pr:") or key == "repo:refs_changed"}
    assert sorted(HOOK_EVENTS) == sorted(set(ROUTES) - data_center)


def test_setup_registers_a_repository_hook_on_the_routed_events(
    bitbucket_api: BitbucketAPI, repo: Repo
) -> None:
    assert SETUP.webhook is not None
    request = HookRequest(HOOK_URL, "hook-secret", BOT_TOKEN, scope=f"repo:{REPO}")
    registered = SETUP.webhook.register(settings_for(bitbucket_api), request)
    [hook] = bitbucket_api.hooks.values()
    assert (hook.owner, hook.subject_type, hook.active) == (REPO, "repository", True)
    assert (hook.url, hook.secret) == (HOOK_URL, "hook-secret")
    assert tuple(hook.events) == HOOK_EVENTS == registered.events
    assert registered.hook_id == hook.uuid and registered.created

    again = HookRequest(HOOK_URL, "new-secret", BOT_TOKEN, scope=f"repo:{REPO}")
    updated = SETUP.webhook.register(settings_for(bitbucket_api), again)
    assert (updated.hook_id, updated.created) == (hook.uuid, False)
    assert len(bitbucket_api.hooks) == 1 and hook.secret == "new-secret"
    rotated = SETUP.webhook.rotate(settings_for(bitbucket_api), replace(again, secret="third"))
    assert rotated.hook_id == hook.uuid and hook.secret == "third"


def test_setup_registers_a_workspace_hook(bitbucket_api: BitbucketAPI) -> None:
    assert SETUP.webhook is not None
    bitbucket_api.add_workspace_admin("acme", "resolver")
    request = HookRequest(HOOK_URL, "hook-secret", BOT_TOKEN, scope="workspace:acme")
    SETUP.webhook.register(settings_for(bitbucket_api), request)
    [hook] = bitbucket_api.hooks.values()
    assert (hook.owner, hook.subject_type) == ("acme", "workspace")


def test_setup_says_what_to_fix_and_changes_nothing(people: BitbucketAPI) -> None:
    assert SETUP.webhook is not None
    settings = settings_for(people)
    reader = HookRequest(HOOK_URL, "hook-secret", BOB, scope=f"repo:{REPO}")
    with pytest.raises(SetupError, match="403"):
        SETUP.webhook.register(settings, reader)
    wrong = HookRequest(HOOK_URL, "hook-secret", "wrong-token", scope=f"repo:{REPO}")
    with pytest.raises(SetupError, match="401"):
        SETUP.webhook.register(settings, wrong)
    with pytest.raises(SetupError, match="register it first"):
        SETUP.webhook.rotate(settings, replace(wrong, credential=BOT_TOKEN))
    for scope in (None, "", "workspace:a/b", "repo:nameonly", "team:x"):
        with pytest.raises(SetupError):
            parse_scope(scope)
    assert people.hooks == {}


def test_preflight_accepts_the_bot_that_administers_the_repository(
    bitbucket_api: BitbucketAPI, repo: Repo
) -> None:
    found = checks(PreflightScope(settings_for(bitbucket_api), (REPO,)))
    assert [(c.name, c.status) for c in found] == [
        ("bitbucket token", "ok"),
        (f"bitbucket access {REPO}", "ok"),
    ]
    # The bot's account id, which a mention picked from Bitbucket's list names, is asked for.
    account = bitbucket_api.user(bitbucket_api.add_user("resolver"))["account_id"]
    assert f"add {account} to RESOLVER_BOT_ACCOUNT_IDS" in found[0].detail
    known = settings_for(bitbucket_api, bot_account_ids=f"{{x}},{account}")
    assert (
        checks(PreflightScope(known, ()))[0].detail
        == f"acts as resolver on {bitbucket_api.api_url}"
    )


def test_preflight_fails_a_refused_token_a_bot_that_only_writes_and_unsigned_hooks(
    people: BitbucketAPI,
) -> None:
    [refused] = checks(PreflightScope(settings_for(people, "wrong-token"), (REPO,)))
    assert (refused.name, refused.status) == ("bitbucket token", "fail")
    assert "wrong-token" not in refused.detail
    found = checks(PreflightScope(settings_for(people, ALICE), (REPO,)))
    assert [c.status for c in found] == ["ok", "fail"] and "make alice an admin" in found[1].detail
    unsigned = settings_for(people, bitbucket_allow_unsigned=True)
    first = checks(PreflightScope(unsigned, ()))[0]
    assert (first.name, first.status) == ("bitbucket webhook", "fail")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{}", "application/json"),
        (b"[]", "application/json"),
        (b'{"uuid": null, "nickname": "bot"}', "application/json"),
        (b'{"uuid": "", "nickname": "bot"}', "application/json"),
        (b'{"uuid": "{u}", "nickname": 7}', "application/json"),
        (b"<html>Sign in to the proxy</html>", "text/html"),
    ],
)
def test_preflight_fails_a_user_answer_of_the_wrong_shape_and_asks_no_permission(
    body: bytes, content_type: str
) -> None:
    with served_answer(body, content_type=content_type) as url:
        settings = registry.settings(
            {"bitbucket_api_url": url, "bitbucket_token": BOT_TOKEN, "secret_keys": KEY},
            env_file=False,
        )
        found = checks(PreflightScope(settings, (REPO,)))
    assert [(c.name, c.status) for c in found] == [("bitbucket token", "fail")]
    assert "Bitbucket's answer to GET /user was unusable" in found[0].detail
    assert "proxy" not in found[0].detail
