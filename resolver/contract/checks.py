"""A check's verdict, as `resolver doctor` prints it and `/setup` shows it: a name, ok/off/fail,
and one line that says what was found or exactly what to fix. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from resolver.core.settings import Settings

Status = Literal["ok", "off", "fail"]
"""`off`: optional and not configured; `fail`: configured and broken (doctor exits non-zero)."""


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str


@dataclass(frozen=True)
class PreflightScope:
    """What the store knows that a provider's preflight looks at, gathered by
    `onboarding.preflight`: the repositories routed to or worked on at that forge."""

    settings: Settings
    repositories: tuple[str, ...] = field(default=())


Preflight = Callable[[PreflightScope], Sequence[Check]]
"""A provider's preflight: its credentials, permissions and webhook, checked over the network.
It never raises: every failure is a `fail` Check naming the fix."""
