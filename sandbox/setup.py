"""A repository's own setup step: `.resolver/setup.sh`, run in the sandbox before the agent.

What it may reach is the job's egress for setup (`sandbox.allow`, set by the caller before
this step). The older switch in `.resolver/config.yml` is still read:

    setup:
      network: true    # setup gets all the egress the operator allows; false: none
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
    network: bool | None = None
    """`setup.network` of the config: None when it does not say."""


def parse_repo_config(text: str) -> bool | None:
    """What the config's `setup.network` says (None: nothing)."""
    try:  # the host read this file first (resolver.core.yamlfile), which refuses what is hostile
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # noqa: S506
    except (yaml.YAMLError, RecursionError) as error:
        raise RepoSetupError(f"{CONFIG_PATH} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise RepoSetupError(f"{CONFIG_PATH} must be a mapping")
    setup = data.get("setup")
    if not isinstance(setup, dict) or setup.get("network") is None:
        return None
    network = setup["network"]
    if not isinstance(network, bool):
        raise RepoSetupError(f"{CONFIG_PATH}: `setup.network` must be true or false")
    return network


def run_setup(sandbox: Sandbox, script: str, timeout: float) -> ExecResult:
    """Run the script in /workspace, under whatever egress the sandbox allows now."""
    if len(script.encode()) > MAX_SCRIPT_BYTES:
        message = f"{SCRIPT_PATH} is larger than {MAX_SCRIPT_BYTES} bytes"
        return ExecResult(exit_code=1, output=message, duration=0.0, timed_out=False)
    command = f"bash -c {shlex.quote(script)} {SCRIPT_PATH}"
    return sandbox.run(command, timeout=timeout, cwd=WORKDIR, label=SCRIPT_PATH)


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
