"""Fixtures every test package may use: a fresh Resolver environment on SQLite or PostgreSQL."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from cryptography.fernet import Fernet

pytest_plugins = ["tests.support.groups"]  # the marks scripts/test groups by


def pytest_configure(config: pytest.Config) -> None:
    """The settings carry each installed provider's section, as the composition roots
    (`app`, `tasks`, the CLI) compose them; a test that installs a provider is composed too."""
    from integrations import registry
    from resolver.core.settings import get_settings

    get_settings.compose(registry.settings_classes)
    _hand_settings_down()


def _hand_settings_down() -> None:
    """Say where the store and the broker read their settings, as the composition roots do:
    from the settings of the moment, when first asked (a test changes its environment)."""
    from resolver.broker import celery_app
    from resolver.core.settings import get_settings
    from resolver.store import db

    db.use_database(lambda: get_settings().database_url)
    celery_app.use_settings(get_settings)


def redis_db_url(db: int) -> str:
    """A Redis database of the test suite. RESOLVER_TEST_REDIS_SHIFT moves every one of them,
    and RESOLVER_TEST_REDIS_PORT names another server, so two runs on one machine (a
    fresh-clone check beside a working tree) never share. An xdist worker has a server of its
    own (PYTEST_XDIST_WORKER), so two workers never share either."""
    shift = int(os.environ.get("RESOLVER_TEST_REDIS_SHIFT", "0"))
    return f"redis://127.0.0.1:{_redis_port()}/{(db + shift) % 16}"


@functools.cache
def _redis_port() -> int:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from tests.support.redis_server import start_private_redis

        return start_private_redis()
    return int(os.environ.get("RESOLVER_TEST_REDIS_PORT", "6379"))


TEST_REDIS = redis_db_url(9)


@dataclass
class ResolverEnv:
    """The environment a test runs Resolver under; `vars` also go to child processes."""

    vars: dict[str, str]
    tmp: Path

    @property
    def database_url(self) -> str:
        return self.vars["RESOLVER_DATABASE_URL"]

    def child_env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, **self.vars, **extra}


def reset_caches() -> None:
    """Forget settings, the Celery app, engines and the secrets masked, read under another
    environment (a bench's process, which no composition root started, is told where the
    settings are)."""
    import resolver.broker.celery_app
    from resolver.core.logs import forget_secrets
    from resolver.core.settings import get_settings

    get_settings.cache_clear()
    resolver.broker.celery_app._app = None
    # Each test's settings bring keys of their own, registered for good: kept, they grew every
    # log line's mask by two a test (unit and services ran a third slower).
    forget_secrets()
    _hand_settings_down()


def _postgres_database(admin_url: str) -> tuple[str, str]:
    name = f"t_{uuid.uuid4().hex[:16]}"
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}", name


def _drop_postgres_database(admin_url: str, name: str) -> None:
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """Parametrize a test over both supported databases."""
    return str(request.param)


def _make_env(tmp_path: Path, database_url: str) -> dict[str, str]:
    return {
        "RESOLVER_DATABASE_URL": database_url,
        "RESOLVER_REDIS_URL": TEST_REDIS,
        "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
        "RESOLVER_ADMIN_TOKEN": "test-admin-token-" + uuid.uuid4().hex,
        "RESOLVER_SANDBOX_WORKSPACE_ROOT": str(tmp_path / "workspaces"),
        "RESOLVER_LEASE_SECONDS": "6",
        "RESOLVER_RECONCILE_INTERVAL": "1",
        "RESOLVER_QUEUED_GRACE_SECONDS": "2",
    }


@pytest.fixture
def resolver_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[ResolverEnv]:
    """A migrated database (SQLite by default, PostgreSQL under `backend`) and a clean Redis db."""
    from resolver.store.migrate import upgrade

    use_pg = (
        "backend" in request.fixturenames and request.getfixturevalue("backend") == "postgresql"
    )
    dropped: list[str] = []
    if use_pg:
        admin = os.environ.get("RESOLVER_TEST_POSTGRES_URL")
        if not admin:
            pytest.fail("RESOLVER_TEST_POSTGRES_URL is not set; run the suite with `make test`")
        url, name = _postgres_database(admin)
        dropped.append(name)
    else:
        url = f"sqlite:///{tmp_path / 'resolver.db'}"
    env = _make_env(tmp_path, url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    redis.Redis.from_url(TEST_REDIS).flushdb()
    reset_caches()
    upgrade(url)
    yield ResolverEnv(env, tmp_path)
    reset_caches()
    from resolver.store.db import engine_for

    engine_for(url).dispose()
    for name in dropped:
        _drop_postgres_database(os.environ["RESOLVER_TEST_POSTGRES_URL"], name)
