"""A job's egress: the operator's maximum (settings), what the repository's
`.resolver/config.yml` asks for within it, and how the proxy's record reads for people.

    network:
      setup: [pypi.example.org]   # the hosts .resolver/setup.sh may reach
      agent: []                   # the agent's commands: nothing

A phase the config does not name gets the operator's maximum. The older `setup.network: false`
still means no network for setup.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from resolver.core.settings import Settings
from sandbox import (
    ANYWHERE,
    NOTHING,
    Allowance,
    EgressConfigError,
    HostRecord,
    Registries,
    find_registries,
    narrow,
    parse_allowance,
)

CONFIG_PATH: Final = ".resolver/config.yml"
PHASES: Final = ("setup", "agent")
MAX_HOSTS_SHOWN: Final = 5
_SAFE_HOST: Final = re.compile(r"[^a-z0-9.:\[\]-]")


@dataclass(frozen=True)
class JobEgress:
    """What each phase of one job may reach, and what the repository asked for in vain."""

    setup: Allowance
    agent: Allowance
    env: tuple[tuple[str, str], ...] = ()
    refused: tuple[str, ...] = ()
    """One sentence per phase whose request went beyond the operator's maximum."""

    @property
    def needed(self) -> bool:
        """Whether the job needs a proxy at all; without one its sandbox has no network."""
        return not (self.setup.nothing and self.agent.nothing)


def egress_level(settings: Settings) -> str:
    """The operator's level; the deprecated RESOLVER_SANDBOX_NETWORK=bridge reads as `open`."""
    if settings.sandbox_egress is not None:
        return settings.sandbox_egress
    return "open" if settings.sandbox_network == "bridge" else "none"


@lru_cache(maxsize=1)
def host_registries() -> Registries:
    """The registries this worker's host uses, found once per process (pip and npm are slow to
    ask)."""
    return find_registries(os.environ)


def operator_maximum(settings: Settings) -> tuple[Allowance, tuple[tuple[str, str], ...]]:
    """The most any job may reach, and the registry settings its sandbox's tools get."""
    level = egress_level(settings)
    if level == "registries":
        found = host_registries()
        return Allowance(found.hosts, ports=found.ports), tuple(found.env.items())
    if level == "allowlist":
        listed = parse_allowance(settings.sandbox_egress_allow)
        if listed.nothing:
            raise EgressConfigError(
                "RESOLVER_SANDBOX_EGRESS=allowlist needs RESOLVER_SANDBOX_EGRESS_ALLOW"
            )
        return listed, ()
    return (ANYWHERE if level == "open" else NOTHING), ()


def job_egress(
    settings: Settings, repo_config: Mapping[str, Any], setup_network: bool | None = None
) -> JobEgress:
    """Each phase's allowance: the repository's list within the operator's maximum, else the
    maximum itself. EgressConfigError when the config's `network` is malformed."""
    maximum, env = operator_maximum(settings)
    asked = _network_section(repo_config)
    granted: dict[str, Allowance] = {}
    refused: list[str] = []
    for phase in PHASES:
        if phase not in asked:
            granted[phase] = NOTHING if phase == "setup" and setup_network is False else maximum
            continue
        granted[phase], beyond = narrow(maximum, asked[phase])
        if beyond:
            refused.append(_refusal(phase, beyond, settings))
    if setup_network and "setup" not in asked and maximum.nothing:
        refused.append(_refusal("setup", ("network",), settings))
    return JobEgress(granted["setup"], granted["agent"], env, tuple(refused))


def _network_section(repo_config: Mapping[str, Any]) -> dict[str, list[str]]:
    section = repo_config.get("network")
    if section is None:
        return {}
    shape = f"{CONFIG_PATH}: `network` must map `setup` and/or `agent` to lists of domains"
    if not isinstance(section, dict) or not set(section) <= set(PHASES):
        raise EgressConfigError(shape)
    for value in section.values():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise EgressConfigError(shape)
    return {phase: list(value) for phase, value in section.items()}


def _refusal(phase: str, beyond: tuple[str, ...], settings: Settings) -> str:
    what = ", ".join(f"`{host}`" for host in beyond)
    level = egress_level(settings)
    return (
        f"`{CONFIG_PATH}` asked for {what} during {phase}; this Resolver allows at most "
        f"`RESOLVER_SANDBOX_EGRESS={level}`, so it was refused."
    )


def egress_record(hosts: Mapping[str, HostRecord]) -> dict[str, Any]:
    """The job's record of its egress, as JSON: each host with its counts and commands."""
    return {host: counted.as_dict() for host, counted in sorted(hosts.items())}


def blocked_notes(hosts: Mapping[str, HostRecord]) -> tuple[str, ...]:
    """One line per blocked host for the status message and the pull request."""
    blocked = [(host, counted) for host, counted in hosts.items() if counted.blocked]
    blocked.sort(key=lambda item: -item[1].blocked)
    notes = [_blocked_line(host, counted) for host, counted in blocked[:MAX_HOSTS_SHOWN]]
    if len(blocked) > MAX_HOSTS_SHOWN:
        notes.append(f"blocked: {len(blocked) - MAX_HOSTS_SHOWN} more hosts (see the job page)")
    return tuple(notes)


def _blocked_line(host: str, counted: HostRecord) -> str:
    requests = "1 request" if counted.blocked == 1 else f"{counted.blocked} requests"
    line = f"blocked: {_SAFE_HOST.sub('', host.lower())}, {requests}"
    if counted.commands:
        line += f", during `{shown_command(counted.commands[0])}`"
        others = len(counted.commands) - 1
        if others:
            line += f" and {others} other command{'s' if others > 1 else ''}"
    return line


def shown_command(command: str, limit: int = 80) -> str:
    """A command on one line, without backticks, cut to `limit` characters."""
    flat = " ".join(command.replace("`", "'").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
