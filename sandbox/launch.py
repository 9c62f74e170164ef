"""Cold start: a fresh workspace volume and a fresh container for one job."""

from __future__ import annotations

from sandbox.container import start_container
from sandbox.naming import check_job_id, job_name, new_token
from sandbox.policy import SandboxPolicy
from sandbox.session import Sandbox
from sandbox.workspace import create_volume, remove_volume


def open_sandbox(job_id: str, policy: SandboxPolicy) -> Sandbox:
    """Create and start a sandbox for `job_id`, with an empty workspace of its own."""
    check_job_id(job_id)
    volume = create_volume(policy.workspace_size, job_id)
    try:
        container_id = start_container(policy, job_name(new_token(), job_id), volume, job_id)
    except BaseException:
        remove_volume(volume)
        raise
    return Sandbox(container_id, job_id, volume, policy)
