"""A sandbox's /workspace: an engine volume of its own, on tmpfs with a size cap.

The host never holds the agent's files in a directory of its own: a repository goes in as an
archive, and a change comes out as data (export.py). The volume lives in memory, so its size
cap is a real quota (a write past it fails with ENOSPC in the sandbox) and nothing of it
outlives its last container.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from sandbox.engine import SandboxNotFoundError, client, engine_errors
from sandbox.naming import LABEL_CREATED, LABEL_DEPLOYMENT, LABEL_JOB, new_token
from sandbox.policy import SandboxPolicy

log = logging.getLogger(__name__)

PREFIX: Final = "resolver-ws-"
# A volume is created just before its container; younger ones are never orphans.
ORPHAN_GRACE: Final = 600.0


def create_volume(policy: SandboxPolicy, job_id: str | None) -> str:
    """A fresh, empty tmpfs volume of the policy's size, owned by the sandbox user; returns its
    name."""
    name = f"{PREFIX}{new_token()}{new_token()}"
    owner = f"uid={policy.user},gid={policy.user}"
    options = f"size={policy.workspace_size},{owner},mode=0755,nosuid,nodev"
    labels = {
        LABEL_CREATED: datetime.now(UTC).isoformat(timespec="seconds"),
        LABEL_JOB: job_id or "",
        LABEL_DEPLOYMENT: policy.deployment,
    }
    with engine_errors("create workspace"):
        client().api.create_volume(
            name,
            driver="local",
            driver_opts={"type": "tmpfs", "device": "tmpfs", "o": options},
            labels=labels,
        )
    return name


def remove_volume(name: str) -> bool:
    """Remove a workspace volume; False when it was already gone. It must be out of use."""
    try:
        with engine_errors("remove workspace"):
            client().api.remove_volume(name, force=True)
    except SandboxNotFoundError:
        return False
    return True


def list_volumes(deployment: str | None = None) -> list[dict[str, Any]]:
    """The engine's records of the workspace volumes (of one deployment, when given)."""
    label = LABEL_CREATED if deployment is None else f"{LABEL_DEPLOYMENT}={deployment}"
    with engine_errors("list workspaces"):
        answer = client().api.volumes(filters={"label": label})
    volumes: list[dict[str, Any]] = answer.get("Volumes") or []
    return [volume for volume in volumes if str(volume.get("Name", "")).startswith(PREFIX)]


def volume_age(volume: Mapping[str, Any], now: datetime) -> float:
    """Seconds since the volume was created, by its label; an unreadable label is ancient."""
    labels: Mapping[str, str] = volume.get("Labels") or {}
    try:
        created = datetime.fromisoformat(labels.get(LABEL_CREATED, ""))
    except ValueError:
        return float("inf")
    created = created if created.tzinfo else created.replace(tzinfo=UTC)
    return (now - created).total_seconds()
