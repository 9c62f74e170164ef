"""A repository's own setup step: `.resolver/setup.sh`, run in the sandbox before the agent.

Network is on for this step only, and only when `.resolver/config.yml` asks for it:

    setup:
      network: true
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Final

import yaml

from sandbox.policy import WORKDIR, ExecResult
from sandbox.session import Sandbox

SCRIPT_PATH: Final = ".resolver/setup.sh"
CONFIG_PATH: Final = ".resolver/config.yml"
# One argv string may not exceed 128 KiB (MAX_ARG_STRLEN); the script travels as one.
MAX_SCRIPT_BYTES: Final = 100_000
_TAIL: Final = 2000


class RepoSetupError(ValueError):
    """The setup cannot be read: a bad config.yml. Says what to fix."""


@dataclass(frozen=True)
class RepoSetup:
    """The setup step a repository asks for, read from its default branch."""

    script: str
    network: bool


def parse_repo_config(text: str) -> bool:
    """Whether the config asks for network during setup."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise RepoSetupError(f"{CONFIG_PATH} is not valid YAML: {error}") from None
    setup = data.get("setup", {}) if isinstance(data, dict) else None
    network = setup.get("network", False) if isinstance(setup, dict) else None
    if not isinstance(network, bool):
        raise RepoSetupError(f"{CONFIG_PATH}: `setup.network` must be true or false")
    return network


def run_setup(sandbox: Sandbox, script: str, network: bool, timeout: float) -> ExecResult:
    """Run the script in /workspace; with `network`, the bridge is attached for this step only."""
    if len(script.encode()) > MAX_SCRIPT_BYTES:
        message = f"{SCRIPT_PATH} is larger than {MAX_SCRIPT_BYTES} bytes"
        return ExecResult(exit_code=1, output=message, duration=0.0, timed_out=False)
    command = f"bash -c {shlex.quote(script)} {SCRIPT_PATH}"
    if network:
        sandbox.connect_network()
    try:
        return sandbox.run(command, timeout=timeout, cwd=WORKDIR)
    finally:
        if network:
            sandbox.disconnect_network()


def setup_failure(result: ExecResult) -> str | None:
    """A one-paragraph account of a failed setup for the user; None when it succeeded."""
    if result.ok:
        return None
    if result.timed_out:
        reason = f"timed out after {result.duration:.0f}s"
    elif result.oom_killed:
        reason = "ran out of memory"
    elif result.cancelled:
        reason = "was cancelled"
    else:
        reason = f"exited with code {result.exit_code}"
    return f"{SCRIPT_PATH} {reason}. Last output:\n{result.output[-_TAIL:]}"
