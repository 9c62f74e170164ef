"""Forgejo's settings come from `RESOLVER_FORGEJO_*`, and the webhook is on only with a secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from integrations.forgejo.settings import ForgejoSettings


@pytest.fixture(autouse=True)
def clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    for name in [n for n in os.environ if n.startswith("RESOLVER_FORGEJO_")]:
        monkeypatch.delenv(name)


def test_the_variables_configure_the_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {
        "URL": "https://forgejo.example",
        "TOKEN": "t0ken",
        "WEBHOOK_SECRET": "s3cret",
        "CLIENT_ID": "app",
        "CLIENT_SECRET": "gto_x",
        "HOOK_TYPE": "gitea",
    }
    for name, value in values.items():
        monkeypatch.setenv(f"RESOLVER_FORGEJO_{name}", value)
    settings = ForgejoSettings()
    assert (settings.url, settings.hook_type) == ("https://forgejo.example", "gitea")
    assert settings.webhook_enabled and settings.sign_in_enabled
    assert "t0ken" not in repr(settings) and "s3cret" not in repr(settings)


def test_without_a_secret_the_webhook_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESOLVER_FORGEJO_URL", "https://forgejo.example")
    monkeypatch.setenv("RESOLVER_FORGEJO_WEBHOOK_SECRET", "")
    settings = ForgejoSettings()
    assert not settings.webhook_enabled and not settings.sign_in_enabled
