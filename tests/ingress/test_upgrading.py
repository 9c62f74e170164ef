"""A webhook that arrives while `resolver db upgrade` runs is answered 503 with Retry-After, not
500, and leaves no row: a sender that tries again (GitLab and Slack by themselves, GitHub when
someone redelivers) is answered as usual once the upgrade is done. Driven through the real app
against a real upgrade held mid-way."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest
from starlette.testclient import TestClient

from tests.conftest import ResolverEnv
from tests.integrations.conftest import Store, reset_caches, webhook_vars
from tests.integrations.deliveries import Delivery, github, load, post, sender

RED_CHECK = "check_run.completed__failure_on_bot_branch"
BEFORE_BOT_PULLS = "0016"
"""The revision before the one that adds `bot_pulls`, which a red check's intake reads."""


@pytest.fixture
def store(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    for key, value in webhook_vars(resolver_env.tmp / "unused.db").items():
        if key not in ("RESOLVER_DATABASE_URL", "RESOLVER_REDIS_URL"):
            monkeypatch.setenv(key, value)
    reset_caches()
    yield Store()
    reset_caches()


class HeldUpgrade:
    """`upgrade` from BEFORE_BOT_PULLS to head, held mid-way: the transaction of migration 0017
    has created `bot_pulls` and waits to create `repo_options`, a name a session of the test
    has taken in a transaction of its own."""

    def __init__(self, url: str) -> None:
        from resolver.store.migrate import upgrade

        self.plain = url.replace("postgresql+psycopg://", "postgresql://")
        self.holder = psycopg.connect(self.plain)
        self.holder.execute("CREATE TABLE repo_options (id integer)")
        self.upgrading = threading.Thread(target=upgrade, args=(url,))
        self.upgrading.start()
        _wait_for_a_lock_wait(self.plain)

    def finish(self) -> None:
        """Let go of the lock, and wait for the upgrade to end."""
        self.holder.rollback()
        self.holder.close()
        self.upgrading.join(timeout=60)
        assert not self.upgrading.is_alive()


@pytest.fixture
def held_upgrade(resolver_env: ResolverEnv) -> Iterator[HeldUpgrade]:
    from alembic import command

    from resolver.store.migrate import alembic_config

    command.downgrade(alembic_config(resolver_env.database_url), BEFORE_BOT_PULLS)
    held = HeldUpgrade(resolver_env.database_url)
    yield held
    if not held.holder.closed:
        held.finish()


def _wait_for_a_lock_wait(plain: str) -> None:
    """Until another session of this database waits for a lock: the upgrade, held."""
    query = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 30
    with psycopg.connect(plain, autocommit=True) as conn:
        while conn.execute(query).fetchone() != (1,):
            assert time.monotonic() < deadline, "the upgrade never reached the held lock"
            time.sleep(0.05)


def red_check() -> Delivery:
    return github("check_run.completed", load("github", RED_CHECK))


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_webhook_during_an_upgrade_is_503_and_its_redelivery_is_answered(
    backend: str, store: Store, held_upgrade: HeldUpgrade
) -> None:
    from resolver.app import create_app

    delivery = red_check()
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        during = post(client, delivery)
        assert during.status_code == 503, during.text
        assert during.headers["retry-after"] == "5"
        assert during.json() == {"error": "unavailable"}
        assert store.deliveries() == [] and store.jobs() == []
        held_upgrade.finish()
        again = post(client, delivery)
    # As on a database that was never upgraded: no pull request of the bot's is known.
    assert again.status_code == 204, again.text


def send(server: str, delivery: Delivery) -> httpx.Response:
    return httpx.post(
        server + delivery.path, content=delivery.body, headers=delivery.headers, timeout=60
    )


@contextmanager
def write_locked(database_url: str) -> Iterator[None]:
    """SQLite's write lock, held by another connection as a migration's transaction holds it."""
    holder = sqlite3.connect(Path(database_url.split("///", 1)[1]), isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_webhook_waiting_for_the_write_lock_stalls_no_other_request(
    server: str, store: Store, webhook_env: dict[str, str]
) -> None:
    """A red check whose repository's options are not known yet writes that a job will read
    them; while an upgrade holds SQLite's write lock it waits, and a ping meanwhile is answered
    at once, not after it. Once the lock goes, the red check is answered."""
    store.link("github", sender("github"), "octocat")
    red, ping = red_check(), github("ping", load("github", "ping__repository_hook"))
    with ThreadPoolExecutor(1) as pool, write_locked(webhook_env["RESOLVER_DATABASE_URL"]):
        waiting = pool.submit(send, server, red)
        time.sleep(1)  # the red check reaches its write, and waits
        started = time.monotonic()
        answered = send(server, ping)
        took = time.monotonic() - started
        assert not waiting.done()
    assert answered.status_code == 204 and took < 2, took
    # Answered as without the lock: no pull request of the bot's is known, nothing to run.
    assert waiting.result().status_code == 204, waiting.result().text
