"""Red CI on the bot's own pull request: the repository's opt-in, the bounds of the loop, and
the failing check as the agent reads it. Pure.

`.resolver/config.yml` on the default branch opts a repository in:

    ci:
      fix: true
      max_attempts: 2   # fix jobs per head commit (1 to MAX_ATTEMPTS_CEILING)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from resolver.contract.outbound import Comment
from resolver.contract.provider import CIReport
from resolver.contract.triggers import FailedCheck
from resolver.core.sanitize import code_span

QUIET: Final = "quiet"
"""A job result key: the job ended without a word in its conversation (a red check left alone)."""
CI_KEY: Final = "ci"
"""The key of `.resolver/config.yml`'s CI settings."""
DEFAULT_MAX_ATTEMPTS: Final = 2
MAX_ATTEMPTS_CEILING: Final = 5
"""Whoever can push to the default branch sets `max_attempts`; the operator pays for it."""
LOG_TAIL_CHARS: Final = 8_000
"""How much of the end of a failed job's log reaches the prompt (its last lines say why)."""
LOG_READ_BYTES: Final = 32 * 1024 * 1024
"""The most of a log that is read to find its tail; a longer one is cut from its start."""
SUMMARY_CHARS: Final = 4_000
MAX_ANNOTATIONS: Final = 50
FAILED_CONCLUSIONS: Final = frozenset({"failure", "timed_out"})


class CIConfigError(ValueError):
    """`ci` in `.resolver/config.yml` is not what the README describes."""


@dataclass(frozen=True)
class CIConfig:
    fix: bool = False
    max_attempts: int = DEFAULT_MAX_ATTEMPTS


def parse_ci_config(repo_config: Mapping[str, object]) -> CIConfig:
    """The repository's `ci` settings (off when absent), or CIConfigError saying what is wrong."""
    value = repo_config.get(CI_KEY)
    if value is None:
        return CIConfig()
    if not isinstance(value, Mapping):
        raise CIConfigError("`ci` must be a mapping, like `ci: {fix: true, max_attempts: 2}`")
    unknown = sorted(str(key) for key in value if key not in ("fix", "max_attempts"))
    if unknown:
        raise CIConfigError(f"`ci` has unknown keys: {', '.join(unknown)}")
    fix = value.get("fix", False)
    if not isinstance(fix, bool):
        raise CIConfigError("`ci.fix` must be true or false")
    attempts = value.get("max_attempts", DEFAULT_MAX_ATTEMPTS)
    valid = isinstance(attempts, int) and not isinstance(attempts, bool)
    if not valid or not 1 <= attempts <= MAX_ATTEMPTS_CEILING:
        raise CIConfigError(
            f"`ci.max_attempts` must be a whole number from 1 to {MAX_ATTEMPTS_CEILING}"
        )
    return CIConfig(fix=fix, max_attempts=attempts)


def build_fix_task(check: FailedCheck) -> str:
    """The request a CI fix job runs: the check's name is written by the repository."""
    return (
        f"The CI check `{check.name}` failed ({check.conclusion}) on this pull request's head "
        f"commit {check.head_sha[:12]}. Find the cause from its output below and fix the code "
        "(not the check) so that it passes; run the failing command when you can."
    )


def tail(text: str, limit: int = LOG_TAIL_CHARS) -> tuple[str, bool]:
    """The last `limit` characters of `text`, from a line start when one is near; and whether
    anything was cut."""
    if len(text) <= limit:
        return text, False
    end = text[-limit:]
    newline = end.find("\n")
    return (end[newline + 1 :] if 0 <= newline < limit // 4 else end), True


def render_annotation(item: Mapping[str, object]) -> str:
    """One GitHub check annotation as a line: `path:line: level: message`."""
    where = f"{item.get('path') or '?'}:{item.get('start_line') or '?'}"
    level = item.get("annotation_level") or "note"
    title = f" {item['title']}:" if item.get("title") else ""
    return f"{where}: {level}:{title} {item.get('message') or ''}".strip()


def report_comments(check: FailedCheck, report: CIReport) -> tuple[Comment, ...]:
    """The check's output as context comments, each fenced as untrusted text in the prompt."""
    who = f"CI check {check.name}"
    found: list[Comment] = []
    if check.title or check.summary:
        text = "\n\n".join(part for part in (check.title, check.summary) if part)
        found.append(Comment(f"{who} (summary)", tail(text, SUMMARY_CHARS)[0]))
    if report.annotations:
        found.append(Comment(f"{who} (annotations)", "\n".join(report.annotations)))
    if report.log_tail:
        cut = "[... the start of the log is cut ...]\n" if report.log_cut else ""
        found.append(Comment(f"{who} (end of its log)", cut + report.log_tail))
    if report.unavailable:
        found.append(Comment(f"{who} (not available)", "\n".join(report.unavailable)))
    return tuple(found)


@dataclass(frozen=True)
class HeadCommit:
    """The branch's newest commit as git records it."""

    sha: str
    author_email: str
    committer_email: str


def why_not_fix(
    config: CIConfig, check: FailedCheck, head: HeadCommit, bot_email: str
) -> tuple[str, bool] | None:
    """Why a fix job must not run (and whether to say so in the pull request), or None.
    The attempt bound is kept in the store (`store.ci_attempts`), not here."""
    if not config.fix:
        return "CI fixing is off for this repository (`ci.fix` in .resolver/config.yml)", False
    if head.sha != check.head_sha:
        return f"the branch moved on from {check.head_sha[:12]}: that check is stale", False
    emails = {head.author_email.lower(), head.committer_email.lower()}
    if emails != {bot_email.lower()}:
        return (
            f"Someone else pushed to `{check.branch}` (its head commit {head.sha[:12]} is not "
            f"mine), so I am leaving the failing check `{check.name}` to them.",
            True,
        )
    return None


def over_attempts_note(check: FailedCheck, max_attempts: int) -> str:
    return (
        f"the check `{check.name}` failed on {check.head_sha[:12]} after {max_attempts} "
        "fix attempt(s) on that commit; not trying again"
    )


MAX_NAME: Final = 200
"""The most of a check's name a status message shows."""


def ci_status_line(check: FailedCheck, attempt: int | None, max_attempts: int | None) -> str:
    """What the status message says about the red check it is fixing."""
    of = (
        f" (attempt {attempt} of {max_attempts} on this commit)" if attempt and max_attempts else ""
    )
    # The name is the repository's (a workflow's `name:`).
    name = code_span(check.name[:MAX_NAME])
    return f"Fixing the failing check {name} ({check.conclusion}){of}."


def limited(items: Sequence[str], limit: int = MAX_ANNOTATIONS) -> tuple[str, ...]:
    shown = tuple(items[:limit])
    more = len(items) - len(shown)
    return shown + ((f"({more} more annotations not shown)",) if more > 0 else ())
