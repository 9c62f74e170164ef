"""`conflicts: fix`: the repository's opt-in to have the bot's own branches updated when their
base moves and they no longer merge cleanly, without anyone asking. Pure.

`.resolver/config.yml` on the default branch opts a repository in:

    conflicts: fix     # or `conflicts: off` (the default)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

CONFLICTS_KEY: Final = "conflicts"
BASE_PUSH_KEY: Final = "base_push"
"""The job's trigger context key for a push to the default branch (`BasePush.as_context`)."""
VALUES: Final = ("fix", "off")


class ConflictsConfigError(ValueError):
    """`conflicts` in `.resolver/config.yml` is not what the README describes."""


@dataclass(frozen=True)
class ConflictsConfig:
    fix: bool = False


def parse_conflicts_config(repo_config: Mapping[str, Any]) -> ConflictsConfig:
    """The repository's `conflicts` setting (off when absent), or ConflictsConfigError."""
    value = repo_config.get(CONFLICTS_KEY)
    if value is None or value is False:
        # YAML reads a bare `off` as false.
        return ConflictsConfig()
    if value not in VALUES:
        raise ConflictsConfigError(
            "`conflicts` must be `fix` (update my branches when they conflict with their "
            f"base) or `off`, not {str(value)[:40]!r}"
        )
    return ConflictsConfig(fix=value == "fix")


@dataclass(frozen=True)
class BasePush:
    """A push to a repository's default branch: the new head of the base."""

    branch: str
    sha: str

    def as_context(self) -> dict[str, Any]:
        return {"branch": self.branch, "sha": self.sha}


def base_push_of(context: Mapping[str, Any]) -> BasePush | None:
    """The push a job's trigger carries; None for any other job."""
    value = context.get(BASE_PUSH_KEY)
    if not isinstance(value, Mapping):
        return None
    branch, sha = value.get("branch"), value.get("sha")
    if not isinstance(branch, str) or not isinstance(sha, str):
        return None
    return BasePush(branch, sha)


def once_key(number: int, base_sha: str) -> str:
    """The bound: one update per pull request per base commit (`store.ci_attempts` row key,
    at most 64 characters)."""
    return f"merge:{number}:{base_sha}"[:64]
