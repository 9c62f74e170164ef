"""A warm pool: containers started ahead of time, so a job's sandbox is ready in milliseconds."""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Final

from sandbox.container import remove_container, rename_container, start_container
from sandbox.engine import SandboxError
from sandbox.launch import open_sandbox
from sandbox.naming import check_job_id, job_name, new_token, pool_name
from sandbox.policy import SandboxPolicy
from sandbox.session import Sandbox
from sandbox.workspace import create_volume, remove_volume

log = logging.getLogger(__name__)

_FIRST_BACKOFF: Final = 1.0
_LAST_BACKOFF: Final = 60.0


@dataclass(frozen=True)
class _Warm:
    container_id: str
    token: str
    volume: str


class WarmPool:
    """Keeps `size` started containers, each with its own empty workspace; 0 turns it off."""

    def __init__(self, policy: SandboxPolicy, size: int):
        self._policy = policy
        self._size = size
        self._ready: deque[_Warm] = deque()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._refill, name="sandbox-pool", daemon=True)
        if size > 0:
            self._thread.start()

    def claim(self, job_id: str) -> Sandbox:
        """A started sandbox for the job: a warm one if ready, else a cold start."""
        check_job_id(job_id)
        while warm := self._take():
            try:
                rename_container(warm.container_id, job_name(warm.token, job_id))
            except SandboxError:
                # The reaper may have removed it (too old); it is of no use either way.
                log.warning("sandbox.pool.stale", extra={"container": warm.container_id})
                self._discard(warm)
                continue
            return Sandbox(warm.container_id, job_id, warm.volume, self._policy)
        return open_sandbox(job_id, self._policy)

    def ready(self) -> int:
        """How many warm containers wait to be claimed."""
        return len(self._ready)

    def close(self) -> None:
        """Stop refilling and remove every unclaimed container and its workspace."""
        self._closed.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        while warm := self._take():
            self._discard(warm)

    def _take(self) -> _Warm | None:
        try:
            warm = self._ready.popleft()
        except IndexError:
            return None
        self._wake.set()
        return warm

    def _refill(self) -> None:
        backoff = _FIRST_BACKOFF
        while not self._closed.is_set():
            if len(self._ready) >= self._size:
                self._wake.wait()
                self._wake.clear()
                continue
            try:
                self._ready.append(self._start())
                backoff = _FIRST_BACKOFF
            except SandboxError:
                log.warning("sandbox.pool.refill_failed", exc_info=True)
                self._closed.wait(backoff)
                backoff = min(backoff * 2, _LAST_BACKOFF)

    def _start(self) -> _Warm:
        token = new_token()
        volume = create_volume(self._policy, None)
        try:
            container_id = start_container(self._policy, pool_name(token), volume, None)
        except BaseException:
            remove_volume(volume)
            raise
        return _Warm(container_id, token, volume)

    def _discard(self, warm: _Warm) -> None:
        try:
            remove_container(warm.container_id)
        finally:
            remove_volume(warm.volume)
