"""Remove what crashed workers left: finished jobs' containers, old ones, warm ones whose pool
is gone, workspace volumes that no container uses any more, and egress proxies and networks
whose sandbox is gone."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any, Final

from sandbox.container import remove_container
from sandbox.engine import SandboxError, client, engine_errors
from sandbox.naming import (
    LABEL_CREATED,
    LABEL_DEPLOYMENT,
    LABEL_ROLE,
    IsStale,
    SandboxInfo,
    parse_info,
    should_reap,
    token_of,
)
from sandbox.proxy import ROLE_NETWORK, ROLE_PROXY, list_egress, remove_network
from sandbox.workspace import ORPHAN_GRACE, list_volumes, remove_volume, volume_age

log = logging.getLogger(__name__)

# A job's proxy and network are made just before its sandbox; younger ones are never orphans.
EGRESS_GRACE: Final = 120.0


def list_sandboxes(deployment: str | None = None) -> list[SandboxInfo]:
    """Every sandbox container on the engine (of one deployment, when given), running or not,
    oldest first."""
    label = LABEL_CREATED if deployment is None else f"{LABEL_DEPLOYMENT}={deployment}"
    with engine_errors("list sandboxes"):
        summaries = client().api.containers(all=True, filters={"label": label})
    boxes = [s for s in summaries if not (s.get("Labels") or {}).get(LABEL_ROLE)]
    return sorted((parse_info(summary) for summary in boxes), key=lambda info: info.created)


def reap(
    is_stale: IsStale, max_age: float, deployment: str, now: datetime | None = None
) -> list[str]:
    """Remove this deployment's dead, too old or stale sandboxes (their job ended, or their
    attempt lost the job), the warm ones of dead workers, and its unused workspaces and egress;
    return the removed containers' ids. Another deployment's sandboxes on the same engine are
    never touched. `now` is the sweep's clock (default: the present)."""
    now = now or datetime.now(UTC)
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
    remove_orphan_egress(deployment, now)
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
    remove_orphan_egress(deployment, None)
    return removed


def remove_orphan_egress(deployment: str, now: datetime | None) -> list[str]:
    """Remove the deployment's egress proxies and networks whose sandbox is gone and that are
    past the grace (every one, with `now` None); return their names."""
    live = {token_of(info.name) for info in list_sandboxes(deployment)}

    def orphan(entry: dict[str, Any], name: str) -> bool:
        young = now is not None and volume_age(entry, now) < EGRESS_GRACE
        return now is None or (token_of(name) not in live and not young)

    removed = []
    for proxy in list_egress(deployment, ROLE_PROXY):
        name = str((proxy.get("Names") or ["/"])[0]).lstrip("/")
        if orphan(proxy, name) and remove_container(str(proxy["Id"])):
            removed.append(name)
    for network in list_egress(deployment, ROLE_NETWORK):
        name = str(network["Name"])
        if orphan(network, name) and _remove_unused_network(name):
            removed.append(name)
    for name in removed:
        log.info("sandbox.egress_reaped", extra={"egress": name})
    return removed


def _remove_unused_network(name: str) -> bool:
    try:
        return remove_network(name)
    except SandboxError:
        # A container the engine has not listed to us still uses it: not an orphan yet.
        log.debug("sandbox.egress_network_in_use", extra={"network": name})
        return False


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
