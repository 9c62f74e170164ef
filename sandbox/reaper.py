"""Remove what crashed workers left: finished jobs' containers, old ones, their workspaces."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from sandbox.container import remove_container
from sandbox.engine import client, engine_errors
from sandbox.launch import default_workspace_root
from sandbox.naming import LABEL_CREATED, SandboxInfo, parse_info, should_reap
from sandbox.workspace import is_workspace_of, remove_workspace

log = logging.getLogger(__name__)


def list_sandboxes() -> list[SandboxInfo]:
    """Every sandbox container on the engine, running or not, oldest first."""
    with engine_errors("list sandboxes"):
        summaries = client().api.containers(all=True, filters={"label": LABEL_CREATED})
    return sorted((parse_info(summary) for summary in summaries), key=lambda info: info.created)


def reap(
    is_job_finished: Callable[[str], bool],
    max_age: float,
    *,
    workspace_root: Path | None = None,
) -> list[str]:
    """Remove dead, too old or finished-job sandboxes and their workspaces; return their ids."""
    root = workspace_root or default_workspace_root()
    now = datetime.now(UTC)
    removed: list[str] = []
    kept: list[SandboxInfo] = []
    for info in list_sandboxes():
        if not should_reap(info, now, max_age, is_job_finished):
            kept.append(info)
            continue
        if remove_container(info.container_id):
            removed.append(info.container_id)
            log.info("sandbox.reaped", extra={"container": info.container_id, "job": info.job_id})
        if info.workspace and is_workspace_of(info.workspace, root):
            remove_workspace(info.workspace)
    _remove_orphans(root, {info.workspace for info in kept if info.workspace}, now, max_age)
    return removed


class PeriodicReaper:
    """Runs `reap` every `interval` seconds on a daemon thread, until `stop`."""

    def __init__(
        self,
        is_job_finished: Callable[[str], bool],
        max_age: float,
        interval: float,
        workspace_root: Path | None = None,
    ):
        self._reap = partial(reap, is_job_finished, max_age, workspace_root=workspace_root)
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
                self._reap()
            except Exception:
                # A background sweep must outlive a bad moment (engine restarting, database
                # away); the next sweep retries, and the failure is logged, not swallowed.
                log.exception("sandbox.reaper.failed")


def _remove_orphans(root: Path, in_use: set[Path], now: datetime, max_age: float) -> None:
    # A crash between removing a container and its workspace leaves a directory nobody names.
    if not root.is_dir():
        return
    for path in root.resolve().iterdir():
        if not is_workspace_of(path, root) or path in in_use or not path.is_dir():
            continue
        if now.timestamp() - path.stat().st_mtime > max_age:
            log.info("sandbox.orphan_workspace_removed", extra={"path": str(path)})
            remove_workspace(path)
