"""Docker sandboxes for agent work: the only package that imports `docker`.

A job gets a locked-down container (no network, no capabilities, read-only root, bounded memory,
pids and CPU) with a host workspace bind-mounted at /workspace, and runs shell commands in it.
"""

from sandbox.engine import SandboxError, SandboxNotFoundError
from sandbox.image import ensure_image, image_tag
from sandbox.launch import open_sandbox
from sandbox.naming import SandboxInfo
from sandbox.policy import ExecResult, SandboxPolicy, policy_from_settings
from sandbox.pool import WarmPool
from sandbox.reaper import PeriodicReaper, list_sandboxes, reap
from sandbox.session import Sandbox
from sandbox.setup import RepoSetup, RepoSetupError, read_repo_setup, run_setup, setup_failure
from sandbox.workspace import prepare_workspace

__all__ = [
    "ExecResult",
    "PeriodicReaper",
    "RepoSetup",
    "RepoSetupError",
    "Sandbox",
    "SandboxError",
    "SandboxInfo",
    "SandboxNotFoundError",
    "SandboxPolicy",
    "WarmPool",
    "ensure_image",
    "image_tag",
    "list_sandboxes",
    "open_sandbox",
    "policy_from_settings",
    "prepare_workspace",
    "read_repo_setup",
    "reap",
    "run_setup",
    "setup_failure",
]
