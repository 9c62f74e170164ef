"""Docker sandboxes for agent work: the only package that imports `docker`.

A job gets a locked-down container (no network, no capabilities, read-only root, bounded memory,
pids and CPU) with a workspace volume of its own (tmpfs, size-capped) at /workspace, and runs
shell commands in it. A job that may reach hosts gets an internal network whose only way out
is a Squid proxy of its own, which enforces the hosts allowed and logs every request.
A repository goes in as an archive; the agent's change comes out as data, read from a second
container once the agent's is gone, and checked before anyone uses it.
"""

from sandbox.attach import Attached
from sandbox.change import Change, ChangedFile, ChangeRejectedError, ExportLimits, check_path
from sandbox.egress import HostRecord
from sandbox.engine import SandboxError, SandboxLostError, SandboxNotFoundError
from sandbox.hosts import (
    ANYWHERE,
    NOTHING,
    Allowance,
    EgressConfigError,
    narrow,
    parse_allowance,
    parse_domains,
    split_list,
)
from sandbox.image import ensure_image, ensure_proxy_image, image_tag, proxy_image_tag
from sandbox.launch import open_sandbox
from sandbox.naming import SandboxInfo
from sandbox.policy import EgressPlan, ExecResult, SandboxPolicy
from sandbox.pool import WarmPool
from sandbox.reaper import PeriodicReaper, list_sandboxes, reap, remove_all
from sandbox.registries import Registries, find_registries
from sandbox.session import Sandbox
from sandbox.setup import RepoSetup, RepoSetupError, parse_repo_config, run_setup, setup_failure

__all__ = [
    "ANYWHERE",
    "NOTHING",
    "Allowance",
    "Attached",
    "Change",
    "ChangeRejectedError",
    "ChangedFile",
    "EgressConfigError",
    "EgressPlan",
    "ExecResult",
    "ExportLimits",
    "HostRecord",
    "PeriodicReaper",
    "Registries",
    "RepoSetup",
    "RepoSetupError",
    "Sandbox",
    "SandboxError",
    "SandboxInfo",
    "SandboxLostError",
    "SandboxNotFoundError",
    "SandboxPolicy",
    "WarmPool",
    "check_path",
    "ensure_image",
    "ensure_proxy_image",
    "find_registries",
    "image_tag",
    "list_sandboxes",
    "narrow",
    "open_sandbox",
    "parse_allowance",
    "parse_domains",
    "parse_repo_config",
    "proxy_image_tag",
    "reap",
    "remove_all",
    "run_setup",
    "setup_failure",
    "split_list",
]
