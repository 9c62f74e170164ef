"""The one Redis lock helper against the test Redis: one holder at a time, a lock that lapses
unless renewed, released when the block ends; a periodic duty claimed once per slot; and a
Redis that cannot be reached raising the broker's own error."""

from __future__ import annotations

import threading
import time

import pytest

from resolver.broker import locks
from resolver.core.settings import get_settings
from tests.conftest import ResolverEnv

pytestmark = pytest.mark.usefixtures("resolver_env")


def test_a_second_holder_is_told_it_did_not_get_the_lock() -> None:
    with (
        locks.held("resolver:test:one", get_settings().redis_url, timeout=10, wait=0.1) as first,
        locks.held("resolver:test:one", get_settings().redis_url, timeout=10, wait=0.3) as second,
    ):
        assert first.acquired and not second.acquired


def test_the_lock_is_free_again_when_its_block_ends() -> None:
    with locks.held("resolver:test:two", get_settings().redis_url, timeout=10, wait=0.1) as first:
        assert first.acquired
    with locks.held("resolver:test:two", get_settings().redis_url, timeout=10, wait=0) as again:
        assert again.acquired


def test_a_waiting_holder_gets_the_lock_as_soon_as_it_is_released() -> None:
    released = threading.Event()

    def hold_briefly() -> None:
        with locks.held("resolver:test:three", get_settings().redis_url, timeout=10, wait=0):
            released.wait(5)

    holder = threading.Thread(target=hold_briefly)
    holder.start()
    time.sleep(0.1)
    threading.Timer(0.2, released.set).start()
    with locks.held("resolver:test:three", get_settings().redis_url, timeout=10, wait=3) as waiting:
        assert waiting.acquired
    holder.join(5)


def test_a_lock_nobody_renews_lapses_after_its_timeout() -> None:
    with locks.held("resolver:test:lapse", get_settings().redis_url, timeout=0.3, wait=0) as first:
        assert first.acquired
        time.sleep(0.5)
        with locks.held(
            "resolver:test:lapse", get_settings().redis_url, timeout=10, wait=0
        ) as taken_over:
            assert taken_over.acquired


def test_a_renewed_lock_outlives_its_first_timeout() -> None:
    with locks.held("resolver:test:renew", get_settings().redis_url, timeout=0.6, wait=0) as first:
        for _ in range(3):
            time.sleep(0.3)
            first.renew()
        with locks.held(
            "resolver:test:renew", get_settings().redis_url, timeout=10, wait=0
        ) as other:
            assert not other.acquired


def test_renewing_a_lock_that_was_lost_is_logged_and_the_holder_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with locks.held("resolver:test:lost", get_settings().redis_url, timeout=0.2, wait=0) as first:
        time.sleep(0.4)
        first.renew()
    assert "lock.renew_failed" in caplog.text


def test_a_periodic_duty_is_claimed_once_per_slot() -> None:
    first = locks.claim_slot(get_settings().redis_url, "test-duty", every=60)
    assert first == int(time.time() // 60)
    assert locks.claim_slot(get_settings().redis_url, "test-duty", every=60) is None
    assert locks.claim_slot(get_settings().redis_url, "other-duty", every=60) == first


def test_the_redis_version_is_reported() -> None:
    assert locks.server_version(get_settings().redis_url).split(".")[0].isdigit()


def test_an_unreachable_redis_raises_the_brokers_error(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(locks.BrokerError):
        locks.server_version("redis://127.0.0.1:1/0", timeout=0.5)
    monkeypatch.setenv("RESOLVER_REDIS_URL", "redis://127.0.0.1:1/0")
    get_settings.cache_clear()
    with (
        pytest.raises(locks.BrokerError),
        locks.held("resolver:test:gone", get_settings().redis_url, timeout=1, wait=0),
    ):
        pass
