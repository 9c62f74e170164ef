"""Settings kept in the vault: read over the environment, which wins where it is set."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from integrations.github.settings import GitHubSettings
from resolver.core.settings import get_settings
from resolver.store import configured
from resolver.store.configured import StoredSettingError
from resolver.store.db import session_scope
from resolver.store.models import StoredSetting
from resolver.store.vault import Vault, rotate_all


@pytest.fixture
def overlay(resolver_env):
    configured.install()
    yield resolver_env
    configured.changed()


def _save(**values: str) -> None:
    with session_scope() as session:
        configured.save(session, get_settings(), values)
    configured.changed()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_stored_setting_is_read_and_kept_encrypted(overlay, backend, monkeypatch) -> None:
    monkeypatch.delenv("RESOLVER_GITHUB_WEBHOOK_SECRET", raising=False)
    _save(github_webhook_secret="stored-secret-0123456789", github_app_id="4242")
    github = GitHubSettings.of(get_settings())
    assert github.app_id == "4242"
    assert github.webhook_secret is not None
    assert github.webhook_secret.get_secret_value() == "stored-secret-0123456789"
    with session_scope() as session:
        rows = session.scalars(select(StoredSetting.ciphertext)).all()
        names = configured.stored_names(session)
    assert set(names) == {"github_webhook_secret", "github_app_id"}
    assert all("stored-secret" not in row and "4242" not in row for row in rows)


def test_the_environment_wins(overlay, monkeypatch) -> None:
    monkeypatch.setenv("RESOLVER_GITHUB_APP_ID", "from-env")
    configured.changed()
    _save(github_app_id="from-vault")
    assert GitHubSettings.of(get_settings()).app_id == "from-env"
    monkeypatch.delenv("RESOLVER_GITHUB_APP_ID")
    configured.changed()
    assert GitHubSettings.of(get_settings()).app_id == "from-vault"


def test_bootstrap_settings_and_bad_values_are_refused(overlay) -> None:
    for values in ({"database_url": "sqlite:///elsewhere.db"}, {"no_such_setting": "x"}):
        with pytest.raises(StoredSettingError), session_scope() as session:
            configured.save(session, get_settings(), values)
    with pytest.raises(StoredSettingError, match="max_body_bytes"), session_scope() as session:
        configured.save(session, get_settings(), {"max_body_bytes": "lots"})
    with pytest.raises(StoredSettingError, match="gitlab_url"), session_scope() as session:
        configured.save(session, get_settings(), {"gitlab_url": "gitlab.example.com"})
    with session_scope() as session:
        assert configured.stored_names(session) == {}


def test_forgotten_settings_fall_back_and_rotation_keeps_them(overlay, monkeypatch) -> None:
    _save(github_app_id="77")
    old = overlay.vars["RESOLVER_SECRET_KEYS"]
    new = f"{Fernet.generate_key().decode()},{old}"
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", new)
    configured.changed()
    with session_scope() as session:
        assert rotate_all(session, Vault(new.split(","))) >= 1
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", new.split(",")[0])  # the old key retired
    configured.changed()
    assert GitHubSettings.of(get_settings()).app_id == "77"
    with session_scope() as session:
        configured.forget(session, ["github_app_id"])
    configured.changed()
    assert GitHubSettings.of(get_settings()).app_id is None
