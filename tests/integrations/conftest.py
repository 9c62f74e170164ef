"""Fixtures for the webhook tests: a migrated SQLite database per test, Redis db 5, secrets; and
the clients the stand-ins' sign-in tests drive (tests/integrations/signin.py)."""

from __future__ import annotations

import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from cryptography.fernet import Fernet
from playwright.sync_api import Browser, sync_playwright
from sqlalchemy import select
from starlette.testclient import TestClient

from resolver.store import accounts
from resolver.store.models import Callback, Delivery, Job, Notice, User
from tests.conftest import redis_db_url
from tests.integrations.deliveries import BOT, SECRETS, own_env
from tests.integrations.signin import CHROMIUM
from tests.support.serving import served_app

TEST_REDIS = redis_db_url(5)


def reset_caches() -> None:
    """Forget the settings and the Celery app built under another test's environment."""
    import resolver.broker.celery_app
    from resolver.core.settings import get_settings

    if resolver.broker.celery_app._app is not None:
        resolver.broker.celery_app._app.close()
    resolver.broker.celery_app._app = None
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def template_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Migrated once; each test gets a copy (migrating per test would dominate the run time)."""
    from resolver.store.db import engine_for
    from resolver.store.migrate import upgrade

    path = tmp_path_factory.mktemp("template") / "resolver.db"
    upgrade(f"sqlite:///{path}")
    engine_for(f"sqlite:///{path}").dispose()
    return path


def webhook_vars(database: Path) -> dict[str, str]:
    return {
        "RESOLVER_DATABASE_URL": f"sqlite:///{database}",
        "RESOLVER_REDIS_URL": TEST_REDIS,
        "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
        "RESOLVER_BOT_NAME": BOT,
        "RESOLVER_TRIGGER_LABEL": "resolver",
        "RESOLVER_ALLOWED_BOTS": "",
        "RESOLVER_BOT_ACCOUNT_IDS": "",
        "RESOLVER_MAX_JOBS_PER_USER": "3",
        "RESOLVER_MAX_JOBS_PER_REPO": "5",
        "RESOLVER_MAX_BODY_BYTES": str(5 * 1024 * 1024),
        "RESOLVER_GITHUB_WEBHOOK_SECRET": SECRETS["github"],
        "RESOLVER_GITLAB_WEBHOOK_TOKEN": SECRETS["gitlab"],
        "RESOLVER_GITLAB_SIGNING_TOKEN": SECRETS["gitlab_signing"],
        "RESOLVER_SLACK_SIGNING_SECRET": SECRETS["slack"],
        "RESOLVER_JIRA_WEBHOOK_SECRET": SECRETS["jira"],
        "RESOLVER_LINEAR_WEBHOOK_SECRET": SECRETS["linear"],
        "RESOLVER_LOG_LEVEL": "WARNING",
        **own_env(),
    }


@pytest.fixture
def webhook_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template_database: Path
) -> Iterator[dict[str, str]]:
    """Every provider configured, a fresh database and an empty Redis db; cwd has no .env."""
    from resolver.store.db import engine_for

    database = tmp_path / "resolver.db"
    shutil.copy(template_database, database)
    env = webhook_vars(database)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    redis.Redis.from_url(TEST_REDIS).flushdb()
    reset_caches()
    yield env
    reset_caches()
    engine_for(env["RESOLVER_DATABASE_URL"]).dispose()


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch, webhook_env: dict[str, str]) -> Any:
    """Change settings inside a test: `configure(RESOLVER_BOT_NAME="x")`."""

    def apply(**values: str) -> None:
        for key, value in values.items():
            monkeypatch.setenv(key, value)
        reset_caches()

    return apply


@pytest.fixture
def client(webhook_env: dict[str, str]) -> Iterator[TestClient]:
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


class Store:
    """What the database holds, read the way a user would check it."""

    def jobs(self) -> list[Job]:
        from resolver.store.db import session_scope

        with session_scope() as session:
            return list(session.scalars(select(Job).order_by(Job.id)))

    def deliveries(self) -> list[Delivery]:
        from resolver.store.db import session_scope

        with session_scope() as session:
            return list(session.scalars(select(Delivery).order_by(Delivery.id)))

    def notices(self) -> list[Notice]:
        from resolver.store.db import session_scope

        with session_scope() as session:
            return list(session.scalars(select(Notice).order_by(Notice.id)))

    def callbacks(self) -> list[Callback]:
        from resolver.store.db import session_scope

        with session_scope() as session:
            return list(session.scalars(select(Callback).order_by(Callback.id)))

    def status_text(self, job_id: int) -> str:
        """The job's status message as it would be posted now."""
        from resolver.callbacks import record, status
        from resolver.core.settings import get_settings
        from resolver.store.db import session_scope
        from resolver.store.jobs import get_job

        with session_scope() as session:
            return status.render(record.view_of(session, get_job(session, job_id), get_settings()))

    def link(
        self, provider: str, external_id: str, login: str | None = None, user: str = "alice"
    ) -> None:
        from resolver.store.db import session_scope

        with session_scope() as session:
            if session.scalar(select(accounts.User).where(User.name == user)) is None:
                accounts.add_user(session, user)
            accounts.link_identity(session, user, provider, external_id, login)


@pytest.fixture
def webhook_client(webhook_env: dict[str, str]) -> Iterator[TestClient]:
    """`client` under a name that provider folders, whose own `client` is their API client,
    do not shadow."""
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


@pytest.fixture
def store(webhook_env: dict[str, str]) -> Store:
    return Store()


@pytest.fixture
def intake_store(
    backend: str, resolver_env: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """The webhook settings over the migrated database of `backend` (SQLite or PostgreSQL), for
    tests that drive the intake directly, without the HTTP app."""
    for key, value in webhook_vars(resolver_env.tmp / "unused.db").items():
        if key not in ("RESOLVER_DATABASE_URL", "RESOLVER_REDIS_URL"):
            monkeypatch.setenv(key, value)
    reset_caches()
    yield Store()
    reset_caches()


@pytest.fixture
def server(webhook_env: dict[str, str]) -> Iterator[str]:
    """The app on a real HTTP server (uvicorn) on a free loopback port; yields its URL."""
    with served_app() as url:
        yield url


# --- The stand-ins' sign-in tests (tests/integrations/signin.py) ----------------------------


@pytest.fixture(scope="session")
def tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle anew takes a fifth of a second."""
    return ssl.create_default_context()


@pytest.fixture
def http(tls: ssl.SSLContext) -> Iterator[httpx.Client]:
    """The browser, and the web app's requests other than Authlib's."""
    with httpx.Client(verify=tls, trust_env=False) as client:
        yield client


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (scripts/browser installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()
