"""Resolver's app on a real HTTP server, its public URL pointed at it, so that a provider
stand-in can deliver to `/webhooks/<name>` what it was registered to send (`live`, `receiver`);
helpers that read the vault back; and the preflight's GitHub stand-in, App key and settings."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import select

from integrations.github.standin.api import GitHubAPI, conformance_problems
from resolver.core.settings import Settings, load_settings
from resolver.store import configured
from resolver.store.db import session_scope
from resolver.store.models import StoredSetting
from tests.conftest import ResolverEnv, reset_caches
from tests.integrations.conftest import template_database, webhook_env
from tests.support.serving import served_app
from tests.web.conftest import forge, public_pem  # noqa: F401  (the GitHub sign-in, for /setup)

__all__ = ["template_database", "webhook_env"]  # fixtures used here, defined there


@dataclass
class Live:
    """Resolver on loopback: `url` is its public URL."""

    url: str
    env: ResolverEnv

    def set(self, monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
        """Settings in the environment (`gitlab_url="…"`), read at once."""
        for name, value in values.items():
            monkeypatch.setenv(f"RESOLVER_{name.upper()}", value)
            self.env.vars[f"RESOLVER_{name.upper()}"] = value
        reset_caches()


@pytest.fixture
def live(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    with served_app() as url:
        served = Live(url, resolver_env)
        served.set(monkeypatch, public_url=served.url, log_level="INFO")
        yield served
    configured.changed()


def stored() -> dict[str, str]:
    """The settings the vault holds, decrypted, by name."""
    from resolver.core.settings import get_settings
    from resolver.store.vault import Vault

    vault = Vault(get_settings().fernet_keys)
    with session_scope() as session:
        rows = session.execute(select(StoredSetting.name, StoredSetting.ciphertext)).all()
    return {name: vault.decrypt(ciphertext).reveal() for name, ciphertext in rows}


def ciphertexts() -> list[str]:
    with session_scope() as session:
        return list(session.scalars(select(StoredSetting.ciphertext)))


APP_ID = "424242"


def strong_secret() -> str:
    return secrets.token_hex(20)


@pytest.fixture(scope="session")
def app_key() -> tuple[str, str]:
    """A GitHub App key pair: (private PEM, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public.decode()


@pytest.fixture
def receiver(webhook_env: dict[str, str]) -> Iterator[str]:
    """Resolver's app (`resolver serve`) on a real loopback port; yields its URL."""
    with served_app() as url:
        yield url


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch, webhook_env: dict[str, str]) -> Callable[..., Any]:
    """Set `RESOLVER_*` variables (for this process and the receiver) and return the settings;
    a value of None unsets one."""

    def apply(**values: str | None) -> Settings:
        for key, value in values.items():
            if value is None:
                monkeypatch.delenv(f"RESOLVER_{key.upper()}", raising=False)
            else:
                monkeypatch.setenv(f"RESOLVER_{key.upper()}", value)
        reset_caches()
        return load_settings()

    return apply


@pytest.fixture
def github_api(app_key: tuple[str, str]) -> Iterator[GitHubAPI]:
    """The GitHub stand-in; every request it got is checked against GitHub's OpenAPI
    description when the test ends."""
    api = GitHubAPI(app_id=APP_ID, public_key=app_key[1])
    yield api
    api.close()
    problems = conformance_problems(api.requests)
    assert not problems, f"requests outside GitHub's OpenAPI description: {problems}"
