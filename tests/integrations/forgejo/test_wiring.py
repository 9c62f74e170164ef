"""Forgejo's sign-in, set-up and preflight against the stand-in, as the descriptor names them:
the OAuth2 client on the instance, who a token is and what it may do; a repository or an
organisation hook registered with the routed events; the token and the bot's admin access
checked."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from cryptography.fernet import Fernet

from integrations import registry
from integrations.forgejo import PROVIDER
from integrations.forgejo.client import HOOK_EVENTS
from integrations.forgejo.preflight import checks
from integrations.forgejo.setup import SETUP, parse_scope
from integrations.forgejo.signin import SIGN_IN
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Repo
from resolver.contract.checks import PreflightScope
from resolver.contract.setup import HookRequest, SetupError
from resolver.contract.signin import RefreshRefusedError
from resolver.core.settings import Settings
from tests.integrations.forgejo.conftest import BOT_TOKEN, REPO

ALICE, BOB, CAROL = "a1ice" * 8, "b0b" * 13, "car0l" * 8
KEY = Fernet.generate_key().decode()
HOOK_URL = "https://resolver.example/webhooks/forgejo"


def settings_for(api: ForgejoAPI, token: str = BOT_TOKEN) -> Settings:
    values = {
        "forgejo_url": api.url,
        "forgejo_token": token,
        "forgejo_client_id": "app",
        "forgejo_client_secret": "gto_secret",
        "public_url": "https://resolver.example",
        "secret_keys": KEY,
    }
    return registry.settings(values, env_file=False)


@pytest.fixture
def people(forgejo_api: ForgejoAPI, repo: Repo) -> ForgejoAPI:
    for token, login in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol")):
        forgejo_api.add_token(token, login)
    return forgejo_api


def test_the_registry_lists_forgejo_as_a_forge_with_its_parts() -> None:
    assert registry.find("forgejo") is PROVIDER and "forgejo" in registry.forge_names()
    assert PROVIDER.sign_in is SIGN_IN and PROVIDER.setup is not None
    assert PROVIDER.setup() is SETUP
    assert PROVIDER.open_pulls is not None and PROVIDER.preflight is not None
    assert PROVIDER.resolve_thread is None and PROVIDER.ci_report is None


def test_sign_in_is_oauth2_on_the_instance(forgejo_api: ForgejoAPI) -> None:
    client = SIGN_IN.client(settings_for(forgejo_api))
    assert client is not None
    assert client.authorize_url == f"{forgejo_api.url}/login/oauth/authorize"
    assert client.access_token_url == f"{forgejo_api.url}/login/oauth/access_token"
    unset = registry.settings({"forgejo_url": forgejo_api.url, "secret_keys": KEY}, env_file=False)
    assert SIGN_IN.client(unset) is None


def test_the_person_and_their_access(people: ForgejoAPI) -> None:
    settings = settings_for(people)
    person = SIGN_IN.person(settings, ALICE)
    assert (person.provider, person.login) == ("forgejo", "alice")
    assert person.external_id == str(people.user_id("alice"))
    alice = SIGN_IN.access(settings, ALICE, REPO)
    bob = SIGN_IN.access(settings, BOB, REPO)
    carol = SIGN_IN.access(settings, CAROL, REPO)
    assert (alice.read, alice.push) == (True, True)
    assert (bob.read, bob.push) == (True, False)
    assert (carol.read, carol.push) == (True, False)  # a public repository: anyone reads
    assert not SIGN_IN.access(settings, ALICE, "not a repository").read


def test_a_refresh_token_the_instance_refuses_means_signing_in_again(
    forgejo_api: ForgejoAPI,
) -> None:
    forgejo_api.oauth.add_app("app", "gto_secret", "https://resolver.example/signin/forgejo/done")
    with pytest.raises(RefreshRefusedError):
        SIGN_IN.refresh(settings_for(forgejo_api), "never-issued")


def test_a_signed_in_token_is_renewed(forgejo_api: ForgejoAPI) -> None:
    redirect = "https://resolver.example/signin/forgejo/done"
    forgejo_api.oauth.add_app("app", "gto_secret", redirect)
    forgejo_api.oauth.signed_in = "alice"
    query = {"client_id": "app", "redirect_uri": redirect, "response_type": "code", "state": "s"}
    back = httpx.get(f"{forgejo_api.url}/login/oauth/authorize", params=query)
    code = httpx.URL(back.headers["location"]).params["code"]
    form = {"client_id": "app", "client_secret": "gto_secret", "code": code}
    form |= {"grant_type": "authorization_code", "redirect_uri": redirect}
    first = httpx.post(f"{forgejo_api.url}/login/oauth/access_token", data=form).json()
    renewed = SIGN_IN.refresh(settings_for(forgejo_api), first["refresh_token"])
    assert renewed.access_token != first["access_token"] and renewed.refresh_token
    assert SIGN_IN.person(settings_for(forgejo_api), renewed.access_token).login == "alice"


def test_setup_registers_a_repository_hook_on_the_routed_events(
    forgejo_api: ForgejoAPI, repo: Repo
) -> None:
    assert SETUP.webhook is not None
    request = HookRequest(HOOK_URL, "hook-secret", BOT_TOKEN, scope=f"repo:{REPO}")
    registered = SETUP.webhook.register(settings_for(forgejo_api), request)
    [hook] = forgejo_api.hooks.values()
    assert (hook.owner, hook.type, hook.active) == (REPO, "forgejo", True)
    assert hook.config["url"] == HOOK_URL and hook.config["secret"] == "hook-secret"
    assert tuple(hook.events) == HOOK_EVENTS == registered.events
    assert registered.hook_id == str(hook.id) and registered.created

    again = HookRequest(HOOK_URL, "new-secret", BOT_TOKEN, scope=f"repo:{REPO}")
    updated = SETUP.webhook.register(settings_for(forgejo_api), again)
    assert (updated.hook_id, updated.created) == (str(hook.id), False)
    assert len(forgejo_api.hooks) == 1 and hook.config["secret"] == "new-secret"
    rotated = SETUP.webhook.rotate(settings_for(forgejo_api), replace(again, secret="third"))
    assert rotated.hook_id == str(hook.id) and hook.config["secret"] == "third"


def test_rotating_without_a_hook_changes_nothing(forgejo_api: ForgejoAPI, repo: Repo) -> None:
    assert SETUP.webhook is not None
    request = HookRequest(HOOK_URL, "hook-secret", BOT_TOKEN, scope=f"repo:{REPO}")
    with pytest.raises(SetupError, match="register it first"):
        SETUP.webhook.rotate(settings_for(forgejo_api), request)
    assert forgejo_api.hooks == {}


def test_setup_registers_an_organisation_hook(forgejo_api: ForgejoAPI) -> None:
    assert SETUP.webhook is not None
    forgejo_api.add_org("forgejo", "resolver")
    request = HookRequest(HOOK_URL, "hook-secret", BOT_TOKEN, scope="org:forgejo")
    SETUP.webhook.register(settings_for(forgejo_api), request)
    [hook] = forgejo_api.hooks.values()
    assert hook.owner == "forgejo"


def test_setup_says_what_to_fix_and_changes_nothing(people: ForgejoAPI) -> None:
    assert SETUP.webhook is not None
    settings = settings_for(people)
    reader = HookRequest(HOOK_URL, "hook-secret", BOB, scope=f"repo:{REPO}")
    with pytest.raises(SetupError, match="403"):
        SETUP.webhook.register(settings, reader)
    wrong = HookRequest(HOOK_URL, "hook-secret", "wrong-token", scope=f"repo:{REPO}")
    with pytest.raises(SetupError, match="401"):
        SETUP.webhook.register(settings, wrong)
    for scope in (None, "", "org:a/b", "repo:nameonly", "team:x"):
        with pytest.raises(SetupError):
            parse_scope(scope)
    assert people.hooks == {}


def test_preflight_accepts_the_bot_that_administers_the_repository(
    forgejo_api: ForgejoAPI, repo: Repo
) -> None:
    found = checks(PreflightScope(settings_for(forgejo_api), (REPO,)))
    assert [(c.name, c.status) for c in found] == [
        ("forgejo token", "ok"),
        (f"forgejo access {REPO}", "ok"),
    ]


def test_preflight_fails_a_refused_token_and_a_bot_that_only_writes(people: ForgejoAPI) -> None:
    [refused] = checks(PreflightScope(settings_for(people, "wrong-token"), (REPO,)))
    assert (refused.name, refused.status) == ("forgejo token", "fail")
    assert "wrong-token" not in refused.detail
    found = checks(PreflightScope(settings_for(people, ALICE), (REPO,)))
    assert [c.status for c in found] == ["ok", "fail"]
    assert "make it an admin" in found[1].detail
