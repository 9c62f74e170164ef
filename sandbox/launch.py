"""Cold start: a fresh workspace volume and a fresh container for one job."""

from __future__ import annotations

from sandbox.container import start_container
from sandbox.naming import check_job_id, job_name, new_token
from sandbox.policy import SandboxPolicy
from sandbox.session import Sandbox
from sandbox.workspace import create_volume, remove_volume


def open_sandbox(job_id: str, policy: SandboxPolicy, owner: str | None = None) -> Sandbox:
    """Create and start a sandbox for `job_id`, with an empty workspace of its own; `owner` is
    the job attempt (lease owner) it belongs to."""
    check_job_id(job_id)
    volume = create_volume(policy, job_id)
    name = job_name(new_token(), job_id)
    try:
        container_id = start_container(policy, name, volume, job_id, owner)
    except BaseException:
        remove_volume(volume)
        raise
    return Sandbox(container_id, job_id, volume, policy, owner)
