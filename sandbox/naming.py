"""Container names and labels, and what they say about a container. Pure functions.

Docker labels cannot change after creation, so a warm container that a job claims is renamed
instead: the name, `resolver-job-<token>-<job id>`, is what ties a container to its job.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

# A job's egress proxy, by name on its network: the sandbox's /etc/hosts holds it before either
# container starts, so the sandbox need not wait.
PROXY_HOST: Final = "egress-proxy"
LABEL_JOB: Final = "resolver.job"
LABEL_CREATED: Final = "resolver.created"
LABEL_WORKSPACE: Final = "resolver.workspace"
LABEL_POOL: Final = "resolver.pool"
LABEL_OWNER: Final = "resolver.owner"
LABEL_DEPLOYMENT: Final = "resolver.deployment"
LABEL_ROLE: Final = "resolver.role"
"""Set on a job's egress proxy and network; a sandbox has none."""

SPARE_LIFETIME: Final = 300.0
"""Seconds a warm container waits unclaimed before its pool replaces it."""
SPARE_MAX_AGE: Final = 2 * SPARE_LIFETIME
"""An unclaimed warm container older than this outlived its pool: its worker died."""

_JOB_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_JOB_NAME: Final = re.compile(r"resolver-job-[0-9a-f]{8}-(?P<job>.+)")
_POOL_NAME: Final = re.compile(r"resolver-pool-[0-9a-f]{8}")
# A job's (or a warm spare's) sandbox, proxy and network share the token of their names.
_TOKEN: Final = re.compile(r"resolver-(?:job|egress|pool)-(?P<token>[0-9a-f]{8})(?:-.+)?")
DEAD_STATES: Final = frozenset({"exited", "dead"})


@dataclass(frozen=True)
class SandboxInfo:
    """A sandbox container as the engine lists it."""

    container_id: str
    name: str
    state: str
    created: datetime
    workspace: str | None
    """The name of its workspace volume."""
    owner: str | None = None
    """The job attempt (lease owner) that started it."""

    @property
    def job_id(self) -> str | None:
        """The job that owns the container; None for an unclaimed warm one."""
        return job_of(self.name)

    @property
    def unclaimed(self) -> bool:
        """Whether it is a warm container no job has claimed yet."""
        return _POOL_NAME.fullmatch(self.name) is not None

    def age(self, now: datetime) -> float:
        return (now - self.created).total_seconds()


def new_token() -> str:
    return secrets.token_hex(4)


def check_job_id(job_id: str) -> str:
    """The job id itself; it must fit in a container name."""
    if not _JOB_ID.fullmatch(job_id):
        raise ValueError(f"job id must match {_JOB_ID.pattern}: {job_id!r}")
    return job_id


def job_name(token: str, job_id: str) -> str:
    return f"resolver-job-{token}-{check_job_id(job_id)}"


def pool_name(token: str) -> str:
    return f"resolver-pool-{token}"


def job_of(name: str) -> str | None:
    match = _JOB_NAME.fullmatch(name.lstrip("/"))
    return match["job"] if match else None


def token_of(name: str) -> str | None:
    """The token of a job's sandbox, egress proxy or network name."""
    match = _TOKEN.fullmatch(name.lstrip("/"))
    return match["token"] if match else None


def build_labels(
    job_id: str | None,
    volume: str,
    created: datetime,
    deployment: str = "",
    owner: str | None = None,
) -> dict[str, str]:
    labels = {
        LABEL_JOB: job_id or "",
        LABEL_CREATED: created.astimezone(UTC).isoformat(timespec="seconds"),
        LABEL_WORKSPACE: volume,
        LABEL_DEPLOYMENT: deployment,
        LABEL_OWNER: owner or "",
    }
    if job_id is None:
        labels[LABEL_POOL] = "1"
    return labels


def parse_info(summary: Mapping[str, Any]) -> SandboxInfo:
    """A SandboxInfo from one entry of the engine's container list."""
    labels: Mapping[str, str] = summary.get("Labels") or {}
    names: list[str] = summary.get("Names") or ["/"]
    return SandboxInfo(
        container_id=str(summary["Id"]),
        name=names[0].lstrip("/"),
        state=str(summary.get("State", "")),
        created=_parse_created(labels.get(LABEL_CREATED, "")),
        workspace=labels.get(LABEL_WORKSPACE) or None,
        owner=labels.get(LABEL_OWNER) or None,
    )


def _parse_created(value: str) -> datetime:
    # A label that is not a time cannot prove the container young, so it counts as ancient.
    try:
        created = datetime.fromisoformat(value)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)
    return created if created.tzinfo else created.replace(tzinfo=UTC)


IsStale = Callable[[str, str | None], bool]
"""Whether a job's sandbox started by an attempt (job id, lease owner) should go."""


def should_reap(info: SandboxInfo, now: datetime, max_age: float, is_stale: IsStale) -> bool:
    """Reap a dead container, one past the maximum age, a warm one its pool outlived, or one
    whose job has ended or whose attempt no longer holds the job."""
    if info.state in DEAD_STATES or info.age(now) > max_age:
        return True
    if info.unclaimed and info.age(now) > SPARE_MAX_AGE:
        return True
    return info.job_id is not None and is_stale(info.job_id, info.owner)
