"""Resolver's app on a real HTTP server, its public URL pointed at it, so that a provider
stand-in can deliver to `/webhooks/<name>` what it was registered to send; and helpers that read
the vault back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import uvicorn
from sqlalchemy import select

from resolver.store import configured
from resolver.store.db import session_scope
from resolver.store.models import StoredSetting
from tests.conftest import ResolverEnv, reset_caches
from tests.web.conftest import forge, public_pem  # noqa: F401  (the GitHub sign-in, for /setup)


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
    from resolver.app import create_app

    runner = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=0, log_config=None))
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    while not runner.started:
        if not thread.is_alive():
            pytest.fail("the server did not start")
        threading.Event().wait(0.01)
    port = runner.servers[0].sockets[0].getsockname()[1]
    served = Live(f"http://127.0.0.1:{port}", resolver_env)
    served.set(monkeypatch, public_url=served.url, log_level="INFO")
    yield served
    runner.should_exit = True
    thread.join(timeout=10)
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
