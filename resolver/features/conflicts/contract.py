"""`conflicts: fix`: the repository's opt-in to have the bot's own branches updated when their
base moves and they no longer merge cleanly, without anyone asking; and what is said when
the agent leaves conflicts (`Unresolved`). Pure.

`.resolver/config.yml` on the default branch opts a repository in:

    conflicts: fix     # or `conflicts: off` (the default)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

CONFLICTS_KEY: Final = "conflicts"
VALUES: Final = ("fix", "off")
UNRESOLVED_KEY: Final = "unresolved"
"""A job's result key (and each pull request's, in a push job's) for `Unresolved`."""
MAX_FILES_NAMED: Final = 20


class ConflictsConfigError(ValueError):
    """`conflicts` in `.resolver/config.yml` is not what the README describes."""


@dataclass(frozen=True)
class ConflictsConfig:
    fix: bool = False


def parse_conflicts_config(repo_config: Mapping[str, object]) -> ConflictsConfig:
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


def once_key(number: int, base_sha: str) -> str:
    """The bound: one update per pull request per base commit (`store.ci_attempts` row key,
    at most 64 characters)."""
    return f"merge:{number}:{base_sha}"[:64]


@dataclass(frozen=True)
class Unresolved:
    """A merge of the base into the bot's branch that the agent left with conflicts: the files
    still conflicted; nothing was pushed."""

    base: str
    branch: str
    base_sha: str
    files: tuple[str, ...]

    def as_context(self) -> dict[str, JsonValue]:
        return {
            "base": self.base,
            "branch": self.branch,
            "base_sha": self.base_sha,
            "files": list(self.files),
        }


def unresolved_of(value: object) -> Unresolved | None:
    """`Unresolved` from a result's `UNRESOLVED_KEY`; None for anything else."""
    if not isinstance(value, Mapping):
        return None
    base, branch, sha, files = (value.get(k) for k in ("base", "branch", "base_sha", "files"))
    texts = (base, branch, sha)
    if not all(isinstance(text, str) for text in texts) or not isinstance(files, list):
        return None
    return Unresolved(str(base), str(branch), str(sha), tuple(str(path) for path in files))


def render_unresolved(unresolved: Unresolved) -> str:
    """What was not done, with the files (the first `MAX_FILES_NAMED` of them)."""
    files = ", ".join(f"`{path}`" for path in unresolved.files[:MAX_FILES_NAMED])
    more = len(unresolved.files) - MAX_FILES_NAMED
    files += f" and {more} more" if more > 0 else ""
    return (
        f"I could not merge `{unresolved.base}` into `{unresolved.branch}`: the conflicts in "
        f"{files} are not resolved, so nothing was pushed."
    )


def render_unresolved_report(unresolved: Unresolved, job_id: int, job_link: str) -> str:
    """The comment on the pull request when `conflicts: fix` could not update it."""
    return (
        f"{render_unresolved(unresolved)}\n\n"
        f"I tried because `conflicts: fix` is set and `{unresolved.base}` moved to "
        f"{unresolved.base_sha[:12]}; I try again when it moves again. "
        f"What the agent did: [job {job_id}]({job_link})."
    )


def report_key(full_name: str, number: int, base_sha: str) -> str:
    """The report's notice key: one comment per pull request per base commit (at most 300
    characters, `store.notices`)."""
    return f"conflicts:{full_name}:{number}:{base_sha}"[:300]
