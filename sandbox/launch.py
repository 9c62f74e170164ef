"""Cold start: a fresh workspace and a fresh container for one job."""

from __future__ import annotations

from pathlib import Path

from resolver.config import get_settings
from sandbox.container import start_container
from sandbox.naming import check_job_id, job_name, new_token
from sandbox.policy import SandboxPolicy
from sandbox.session import Sandbox
from sandbox.workspace import create_workspace, remove_workspace


def open_sandbox(
    job_id: str,
    policy: SandboxPolicy,
    workspace: Path | None = None,
    *,
    workspace_root: Path | None = None,
) -> Sandbox:
    """Create and start a sandbox for `job_id`; without `workspace`, make a fresh one."""
    check_job_id(job_id)
    created = workspace is None
    path = workspace or create_workspace(workspace_root or default_workspace_root())
    try:
        name = job_name(new_token(), job_id)
        container_id = start_container(policy, name, path.resolve(), job_id)
    except BaseException:
        if created:
            remove_workspace(path)
        raise
    return Sandbox(container_id, job_id, path, policy)


def default_workspace_root() -> Path:
    """settings.sandbox_workspace_root; read only when the caller names no root."""
    return get_settings().sandbox_workspace_root
