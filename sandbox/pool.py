"""A warm pool: containers started ahead of time, so a job's sandbox is ready in milliseconds.

Jobs with network have spares of their own: an internal network, its proxy listening with the
pool's egress plan, and a container on that network. A job whose plan starts elsewhere gets
the spare's proxy reconfigured in place.

A spare lives at most `lifetime` seconds unclaimed; the pool replaces older ones, so a spare
older than that (the reaper's `SPARE_MAX_AGE`) belongs to a worker that died. A claim checks
that its spare still runs (one inspect, a few milliseconds): one that died meanwhile is dropped
for the next spare or a cold start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

from sandbox.container import rename_container
from sandbox.engine import SandboxError, SandboxLostError
from sandbox.execution import Shell, Stopped, container_stopped
from sandbox.launch import Started, discard, open_sandbox, start_sandbox
from sandbox.naming import SPARE_LIFETIME, check_job_id, job_name, new_token
from sandbox.policy import EgressPlan, SandboxPolicy
from sandbox.session import Sandbox

log = logging.getLogger(__name__)

_FIRST_BACKOFF: Final = 1.0
_LAST_BACKOFF: Final = 60.0
# After a claim the pool waits this long before starting the next one, so that the claimed
# sandbox's first commands do not queue behind a network, a proxy and a container at the engine.
REFILL_PAUSE: Final = 1.0


@dataclass(frozen=True)
class _Warm:
    started: Started
    token: str
    born: float
    """time.monotonic() when it was ready."""
    shell: Shell
    """Its session's shell, started ahead too: the first command need not wait for it."""


class WarmPool:
    """Keeps `size` started containers, each with its own empty workspace (0: none), and, with
    an `egress` plan, `spares` more behind proxies of their own."""

    def __init__(
        self,
        policy: SandboxPolicy,
        size: int,
        egress: EgressPlan | None = None,
        spares: int = 1,
        lifetime: float = SPARE_LIFETIME,
    ):
        self._policy = policy
        self._egress = egress
        self._lifetime = lifetime
        self._wanted = {False: size, True: spares if egress is not None else 0}
        self._ready: dict[bool, deque[_Warm]] = {False: deque(), True: deque()}
        self._lock = threading.Lock()
        self._claimed_at = 0.0
        self._wake = threading.Event()
        self._closed = threading.Event()
        # A claimed container takes the job's name in the background: a rename on a network
        # costs the engine tens of milliseconds (its DNS records), and nothing needs the name
        # until the reaper looks (minutes later at the earliest). Dead spares go there too.
        self._chores = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-pool")
        self._thread = threading.Thread(target=self._refill, name="sandbox-pool", daemon=True)
        if any(self._wanted.values()):
            self._thread.start()

    def claim(
        self, job_id: str, owner: str | None = None, egress: EgressPlan | None = None
    ) -> Sandbox:
        """A started sandbox for the job: a warm one if ready, else a cold start. A job with
        `egress` takes a spare when its tools' settings are the pool's."""
        check_job_id(job_id)
        networked = egress is not None
        while self._fits(egress) and (warm := self._take(networked)):
            if not self._alive(warm):
                continue
            box = self._adopt(warm, job_id, owner, egress)
            if box is not None:
                return box
        return open_sandbox(job_id, self._policy, owner, egress)

    def ready(self, networked: bool = False) -> int:
        """How many warm containers (with networked, spares) wait to be claimed."""
        return len(self._ready[networked])

    def close(self) -> None:
        """Stop refilling and remove every unclaimed container, proxy and workspace."""
        self._closed.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        self._chores.shutdown(wait=True)
        for networked in (False, True):
            while warm := self._take(networked, fresh_only=False):
                _drop(warm)

    def _fits(self, egress: EgressPlan | None) -> bool:
        """A spare's tools were set up for the pool's plan: a job with other settings (another
        registry) cannot use one."""
        if egress is None:
            return True
        return self._egress is not None and egress.env == self._egress.env

    def _alive(self, warm: _Warm) -> bool:
        """Whether a spare still runs: its shell has not hung up, and the engine says it runs
        (one inspect). An engine restart, a prune or an operator's `docker rm` kills spares
        without the pool seeing it. A dead one is dropped; when the engine cannot be reached,
        every spare goes (a restarted engine has killed them all)."""
        container_id = warm.started.container_id
        try:
            alive = warm.shell.ready()
            stopped = container_stopped(container_id) if alive else Stopped("its shell ended", True)
        except SandboxLostError:
            log.warning("sandbox.pool.engine_lost", exc_info=True, extra={"id": container_id})
            self._flush(warm)
            return False
        if stopped is None:
            return True
        log.warning("sandbox.pool.spare_dead", extra={"id": container_id, "why": stopped.reason})
        self._chores.submit(_drop_quietly, warm)
        return False

    def _flush(self, *dead: _Warm) -> None:
        """Drop every spare, in the background."""
        for networked in (False, True):
            with self._lock:
                dead += tuple(self._ready[networked])
                self._ready[networked].clear()
        for warm in dead:
            self._chores.submit(_drop_quietly, warm)

    def _adopt(
        self, warm: _Warm, job_id: str, owner: str | None, egress: EgressPlan | None
    ) -> Sandbox | None:
        started = warm.started
        naming = self._chores.submit(_rename, started.container_id, job_name(warm.token, job_id))
        box = Sandbox(
            started.container_id,
            job_id,
            started.volume,
            self._policy,
            owner,
            started.proxy,
            warm.shell,
            naming,
        )
        if egress is None or self._egress is None or egress.first == self._egress.first:
            return box
        try:
            box.allow(egress.first)
        except SandboxError:
            log.warning("sandbox.pool.spare_unusable", exc_info=True, extra={"id": job_id})
            box.__exit__(None, None, None)
            return None
        return box

    def _take(self, networked: bool, fresh_only: bool = True) -> _Warm | None:
        """The oldest warm container of the kind; older ones past their lifetime are dropped."""
        while True:
            with self._lock:
                try:
                    warm = self._ready[networked].popleft()
                except IndexError:
                    return None
            self._claimed_at = time.monotonic()
            self._wake.set()
            if not fresh_only or time.monotonic() - warm.born < self._lifetime:
                return warm
            _drop(warm)

    def _refill(self) -> None:
        backoff = _FIRST_BACKOFF
        while not self._closed.is_set():
            self._expire()
            wanting = [kind for kind, size in self._wanted.items() if self.ready(kind) < size]
            if not wanting:
                self._wake.wait(self._lifetime / 4)
                self._wake.clear()
                continue
            pause = self._claimed_at + REFILL_PAUSE - time.monotonic()
            if pause > 0:
                self._closed.wait(pause)
                continue
            try:
                warm = self._start(wanting[0])
            except SandboxError:
                log.warning("sandbox.pool.refill_failed", exc_info=True)
                self._closed.wait(backoff)
                backoff = min(backoff * 2, _LAST_BACKOFF)
                continue
            backoff = _FIRST_BACKOFF
            with self._lock:
                self._ready[wanting[0]].append(warm)

    def _expire(self) -> None:
        """Replace what waited past its lifetime: the reaper takes an older one for a dead
        worker's."""
        for networked in (False, True):
            with self._lock:
                queue = self._ready[networked]
                old = [w for w in queue if time.monotonic() - w.born >= self._lifetime]
                for warm in old:
                    queue.remove(warm)
            for warm in old:
                _drop(warm)

    def _start(self, networked: bool) -> _Warm:
        token = new_token()
        plan = self._egress if networked else None
        started = start_sandbox(self._policy, token, None, None, plan)
        try:
            if started.proxy is not None:
                started.proxy.ready()
            shell = Shell(started.container_id, self._policy.user)
        except BaseException:
            discard(started)
            raise
        return _Warm(started, token, time.monotonic(), shell)


def _rename(container_id: str, name: str) -> None:
    try:
        rename_container(container_id, name)
    except SandboxError:
        # Gone since its claim found it running (so the engine failed): the first command says
        # so; one left with the spare's name is reaped as one.
        log.warning("sandbox.pool.rename_failed", exc_info=True, extra={"id": container_id})


def _drop(warm: _Warm) -> None:
    warm.shell.close()
    discard(warm.started)


def _drop_quietly(warm: _Warm) -> None:
    """Drop a dead spare; what the engine cannot remove now is the reaper's."""
    try:
        _drop(warm)
    except SandboxError:
        log.warning("sandbox.pool.drop_failed", exc_info=True, extra={"id": warm.token})
