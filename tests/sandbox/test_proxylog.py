"""The egress proxy's log reader waits for its shell within a timeout of its own: the engine's
frame reader polls with none, so a shell that never speaks (Squid not listening yet, or a stream
the engine holds open without a word) ends in a clear error when the time is up, and the warm
pool starts another proxy, rather than a wait without end."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from sandbox import proxylog, squid
from sandbox.engine import SandboxError, client
from sandbox.execution import capture
from sandbox.naming import LABEL_DEPLOYMENT
from sandbox.proxy import PROXY_UID
from tests.sandbox.conftest import DEPLOYMENT, RUN_PREFIX


@pytest.fixture
def silent_proxy(proxy_image: str) -> Iterator[str]:
    """A proxy container whose Squid never starts: its log shell waits for it, saying nothing."""
    container = client().containers.run(
        proxy_image,
        ["sleep", "600"],
        entrypoint=[],
        detach=True,
        name=f"{RUN_PREFIX}-silent-proxy",
        labels={LABEL_DEPLOYMENT: DEPLOYMENT},
        tmpfs={squid.DIR: "rw,mode=1777"},
        network_mode="none",
    )
    try:
        yield str(container.id)
    finally:
        container.remove(force=True)


def test_a_log_shell_that_never_speaks_is_given_up_on_in_time(
    silent_proxy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxylog, "READY_TIMEOUT", 1.0)  # the shell itself waits 30 s
    monkeypatch.setattr(proxylog, "SETTLE", 0.5)
    started = time.monotonic()
    with pytest.raises(SandboxError, match="did not answer"):
        proxylog.ProxyLog.open(silent_proxy, PROXY_UID)
    assert time.monotonic() - started < 10


def test_the_shell_stops_waiting_for_squid_by_the_clock(silent_proxy: str) -> None:
    argv = ["bash", "-c", proxylog.wait_listening(2), "bash", "0"]
    started = time.monotonic()
    code, _output = capture(silent_proxy, argv, PROXY_UID, squid.DIR)
    assert code == proxylog.TIMED_OUT
    assert 1 <= time.monotonic() - started < 10
