"""A GitLab OAuth token: signing in when already linked stores it; it is renewed before its two
hours are up, and GitLab then refuses the spent refresh token (400 `invalid_grant`); once the
person revokes the application, the renewal is refused and they are told to sign in again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from integrations.gitlab.standin.api import GitLabAPI
from integrations.gitlab.tokens import user_token
from resolver.contract.errors import PermanentCallbackError
from resolver.core.settings import get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.models import Credential
from resolver.store.vault import Vault
from tests.conftest import reset_caches
from tests.web.conftest import PUBLIC_URL, browser
from tests.web.test_gitlab_signin import _sign_in
from tests.web.test_linking import _rows
from tests.web.test_tokens import SIGN_IN_AGAIN, Clock


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime.now(UTC))


@pytest.fixture
def gitlab(resolver_env, monkeypatch: pytest.MonkeyPatch, clock: Clock) -> Iterator[GitLabAPI]:
    api = GitLabAPI()
    api.oauth.clock = clock.time
    api.add_oauth_app("gl-client", "gl-secret")
    settings = {
        "RESOLVER_GITLAB_URL": api.url,
        "RESOLVER_GITLAB_CLIENT_ID": "gl-client",
        "RESOLVER_GITLAB_CLIENT_SECRET": "gl-secret",
        "RESOLVER_PUBLIC_URL": PUBLIC_URL,
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    reset_caches()
    yield api
    api.close()


def _opened(credential: Credential) -> tuple[str, str]:
    vault = Vault(get_settings().fernet_keys)
    assert credential.refresh_ciphertext is not None
    return (
        vault.decrypt(credential.ciphertext).reveal(),
        vault.decrypt(credential.refresh_ciphertext).reveal(),
    )


def test_a_gitlab_token_is_renewed_then_its_revocation_is_noticed(
    gitlab: GitLabAPI, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    from resolver.app import create_app

    caplog.set_level(logging.DEBUG)
    gwen = gitlab.add_user("gwen")
    with session_scope() as session:
        user_id = accounts.add_user(session, "gwen").id
        accounts.link_identity(session, "gwen", "gitlab", str(gwen), "gwen")
    client = browser(create_app())
    _sign_in(client, gitlab, "gwen")
    [credential] = _rows(Credential)
    first, first_refresh = _opened(credential)
    owner = (credential.provider, credential.kind, credential.user_id)
    assert owner == ("gitlab", "oauth", user_id)
    assert gitlab.tokens[first] == gwen

    clock.now += timedelta(hours=1, minutes=56)
    renewed = user_token(user_id, get_settings(), clock)
    assert renewed != first and gitlab.tokens[renewed] == gwen and first not in gitlab.tokens
    spent = httpx.post(
        f"{gitlab.url}/oauth/token",
        data={
            "client_id": "gl-client",
            "client_secret": "gl-secret",
            "grant_type": "refresh_token",
            "refresh_token": first_refresh,
        },
        trust_env=False,
    )
    assert spent.status_code == 400 and spent.json()["error"] == "invalid_grant"
    [credential] = _rows(Credential)
    again, rotated = _opened(credential)
    assert again == renewed and rotated != first_refresh

    gitlab.revoke_authorization("gwen")
    clock.now += timedelta(hours=2)
    with pytest.raises(PermanentCallbackError) as refused:
        user_token(user_id, get_settings(), clock)
    assert "GitLab authorization was revoked" in str(refused.value)
    assert SIGN_IN_AGAIN in str(refused.value)
    [credential] = _rows(Credential)
    assert credential.revoked_at is not None
    me = client.get("/me").text
    assert "GitLab no longer accepts it" in me and 'href="/signin?next=/me"' in me
    logged = caplog.text + "".join(str(vars(record)) for record in caplog.records)
    for secret in (first, first_refresh, renewed, rotated):
        assert secret not in logged and secret not in me and secret not in str(refused.value)
