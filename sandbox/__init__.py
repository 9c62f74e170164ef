"""Docker sandboxes for agent work: the only package that imports `docker`.

A job gets a locked-down container (no network, no capabilities, read-only root, bounded memory,
pids and CPU) with a workspace volume of its own (tmpfs, size-capped) at /workspace, and runs
shell commands in it. A repository goes in as an archive; the agent's change comes out as data,
read from a second container once the agent's is gone, and checked before anyone uses it.
"""

from sandbox.change import Change, ChangedFile, ChangeRejectedError, ExportLimits, check_path
from sandbox.engine import SandboxError, SandboxNotFoundError
from sandbox.image import ensure_image, image_tag
from sandbox.launch import open_sandbox
from sandbox.naming import SandboxInfo
from sandbox.policy import ExecResult, SandboxPolicy
from sandbox.pool import WarmPool
from sandbox.reaper import PeriodicReaper, list_sandboxes, reap, remove_all
from sandbox.session import Sandbox
from sandbox.setup import RepoSetup, RepoSetupError, parse_repo_config, run_setup, setup_failure

__all__ = [
    "Change",
    "ChangeRejectedError",
    "ChangedFile",
    "ExecResult",
    "ExportLimits",
    "PeriodicReaper",
    "RepoSetup",
    "RepoSetupError",
    "Sandbox",
    "SandboxError",
    "SandboxInfo",
    "SandboxNotFoundError",
    "SandboxPolicy",
    "WarmPool",
    "check_path",
    "ensure_image",
    "image_tag",
    "list_sandboxes",
    "open_sandbox",
    "parse_repo_config",
    "reap",
    "remove_all",
    "run_setup",
    "setup_failure",
]
