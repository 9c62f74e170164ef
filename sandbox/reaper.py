"""Remove what crashed workers left: finished jobs' containers, old ones, and workspace volumes
that no container uses any more."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from sandbox.container import remove_container
from sandbox.engine import SandboxError, client, engine_errors
from sandbox.naming import (
    LABEL_CREATED,
    LABEL_DEPLOYMENT,
    IsStale,
    SandboxInfo,
    parse_info,
    should_reap,
)
from sandbox.workspace import ORPHAN_GRACE, list_volumes, remove_volume, volume_age

log = logging.getLogger(__name__)


def list_sandboxes(deployment: str | None = None) -> list[SandboxInfo]:
    """Every sandbox container on the engine (of one deployment, when given), running or not,
    oldest first."""
    label = LABEL_CREATED if deployment is None else f"{LABEL_DEPLOYMENT}={deployment}"
    with engine_errors("list sandboxes"):
        summaries = client().api.containers(all=True, filters={"label": label})
    return sorted((parse_info(summary) for summary in summaries), key=lambda info: info.created)


def reap(is_stale: IsStale, max_age: float, deployment: str) -> list[str]:
    """Remove this deployment's dead, too old or stale sandboxes (their job ended, or their
    attempt lost the job) and its unused workspaces; return the removed containers' ids.
    Another deployment's sandboxes on the same engine are never touched."""
    now = datetime.now(UTC)
    removed: list[str] = []
    kept: set[str] = set()
    for info in list_sandboxes(deployment):
        if not should_reap(info, now, max_age, is_stale):
            kept.update([info.workspace] if info.workspace else [])
            continue
        if remove_container(info.container_id):
            removed.append(info.container_id)
            log.info("sandbox.reaped", extra={"container": info.container_id, "job": info.job_id})
    _remove_orphan_volumes(deployment, kept, now)
    return removed


def remove_all(deployment: str) -> list[str]:
    """Remove every container and workspace volume of a deployment, running or not (a test's
    stack on its way out); returns the removed containers' ids."""
    removed = [
        info.container_id
        for info in list_sandboxes(deployment)
        if remove_container(info.container_id)
    ]
    for volume in list_volumes(deployment):
        remove_volume(str(volume["Name"]))
    return removed


class PeriodicReaper:
    """Runs `reap` every `interval` seconds on a daemon thread, until `stop`."""

    def __init__(
        self,
        is_stale: IsStale,
        max_age: float,
        interval: float,
        deployment: str,
        on_swept: Callable[[list[str]], None] | None = None,
    ):
        self._reap = partial(reap, is_stale, max_age, deployment)
        self._on_swept = on_swept
        self._interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sandbox-reaper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                removed = self._reap()
                if self._on_swept is not None:
                    self._on_swept(removed)
            except Exception:
                # A background sweep must outlive a bad moment (engine restarting, database
                # away); the next sweep retries, and the failure is logged, not swallowed.
                log.exception("sandbox.reaper.failed")


def _remove_orphan_volumes(deployment: str, in_use: set[str], now: datetime) -> None:
    # A crash between removing a container and its volume leaves a volume nobody names. A
    # volume is made just before its container, so young ones are left for the next sweep.
    for volume in list_volumes(deployment):
        name = str(volume["Name"])
        if name in in_use or volume_age(volume, now) < ORPHAN_GRACE:
            continue
        try:
            if remove_volume(name):
                log.info("sandbox.orphan_workspace_removed", extra={"volume": name})
        except SandboxError:
            # Still mounted by a container the engine has not listed to us: not an orphan.
            log.debug("sandbox.workspace_in_use", extra={"volume": name})
