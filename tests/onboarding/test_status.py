"""Where each setting comes from, as `/setup` and `resolver setup` show it
(onboarding/status.py): the environment, which wins, the vault, or nowhere; never its value."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from resolver.core.settings import get_settings
from resolver.onboarding.status import SettingOrigin, origins
from resolver.store import configured
from resolver.store.db import session_scope
from tests.conftest import ResolverEnv

NAMES = ("github_app_id", "github_webhook_secret", "slack_signing_secret", "linear_webhook_secret")


@pytest.fixture
def overlay(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in NAMES:
        monkeypatch.delenv(f"RESOLVER_{name.upper()}", raising=False)
    configured.install()
    yield
    configured.changed()


def store(**values: str) -> None:
    with session_scope() as session:
        configured.save(session, get_settings(), values)
    configured.changed()


def test_each_setting_says_where_it_comes_from(
    overlay: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESOLVER_GITHUB_APP_ID", "4242")
    monkeypatch.setenv("RESOLVER_SLACK_SIGNING_SECRET", "env-slack-secret-0123456789")
    store(github_app_id="1111", github_webhook_secret="vault-secret-0123456789")
    with session_scope() as session:
        found = origins(session, NAMES)
    assert found == [
        SettingOrigin("github_app_id", "environment", also_stored=True),
        SettingOrigin("github_webhook_secret", "vault"),
        SettingOrigin("slack_signing_secret", "environment"),
        SettingOrigin("linear_webhook_secret", ""),
    ]
    assert "0123456789" not in repr(found) and "4242" not in repr(found)
    assert [item.variable for item in found][:2] == [
        "RESOLVER_GITHUB_APP_ID",
        "RESOLVER_GITHUB_WEBHOOK_SECRET",
    ]
