"""Proof of work in words: the Verification block and the branch's files, for a pull request's
description, and their short form for the status message. Pure.

Every command shown was recorded by the host as it ran (`resolver.agent.verify`); its text is
the model's, so it is flattened onto one line and shown only inside a code span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from resolver.contract.verification import Check, CheckKind, Verification
from resolver.core.sanitize import code_span as code

MARKS: Final = {"passed": "✅", "failed": "❌", "unknown": "❔"}
NOUNS: Final[dict[CheckKind, str]] = {"test": "tests", "lint": "lint", "build": "build"}
SHORT_CHECKS: Final = 3
WORDS: Final = {"passed": "passed", "failed": "failed", "unknown": "ran (exit code unknown)"}
FileStat = Sequence[object]  # [path, added or None, removed or None]


def runs(check: Check) -> str:
    return "1 run" if check.runs == 1 else f"{check.runs} runs"


def _detail(check: Check) -> str:
    if check.timed_out:
        return f"timed out ({runs(check)})"
    exit_code = "exit code unknown" if check.exit_code is None else f"exit {check.exit_code}"
    if check.masked:
        return f"{exit_code}, but that is the pipeline's, not the runner's ({runs(check)})"
    if check.result == "failed" and check.passes:
        return f"{exit_code} on the last of {runs(check)}; an earlier run passed"
    return f"{exit_code} ({runs(check)})"


def not_run_sentence(kinds: Sequence[CheckKind]) -> str:
    """ "No tests ran." / "No tests or lint ran." """
    if not kinds:
        return ""
    names = [NOUNS[kind] for kind in kinds]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"No {joined} ran."


def render_verification(verification: Verification) -> str:
    """The Verification section of a pull request's description."""
    lines = [
        "### Verification",
        "",
        "From the commands the agent ran in its sandbox, as Resolver recorded them (not as "
        "the model reported them); the last run of each counts.",
        "",
    ]
    lines += [
        f"- {MARKS[c.result]} {code(c.command)} · {c.kind} · {_detail(c)}"
        for c in verification.checks
    ]
    missing = not_run_sentence(verification.not_run)
    if missing:
        lines.append(f"- ⚠️ **{missing}**")
    return "\n".join(lines)


def render_verified_short(verification: Verification) -> str:
    """One line for the status message: `Verified: `pytest` passed (3 runs); no lint ran.`"""
    parts = [
        f"{code(c.command)} {'timed out' if c.timed_out else WORDS[c.result]} ({runs(c)})"
        for c in verification.checks[:SHORT_CHECKS]
    ]
    more = len(verification.checks) - SHORT_CHECKS
    if more > 0:
        parts.append(f"{more} more on the job's page")
    missing = not_run_sentence(verification.not_run)
    if missing:
        parts.append(missing[0].lower() + missing[1:-1])
    if not parts:
        return ""
    results = {c.result for c in verification.checks}
    head = "Verified" if results == {"passed"} else "Checked" if results else "Not verified"
    return f"{head}: " + "; ".join(parts) + "."


def render_files(files: Sequence[FileStat], total: int) -> str:
    """The branch's files with their added and removed lines."""
    if not files:
        return ""
    added = sum(int(f[1]) for f in files if isinstance(f[1], int))
    removed = sum(int(f[2]) for f in files if isinstance(f[2], int))
    count = max(total, len(files))
    word = "file" if count == 1 else "files"
    lines = ["### Changes", "", f"{count} {word} changed (+{added} -{removed}):", ""]
    lines += [f"- {code(_short(str(f[0])))} {_lines(f)}" for f in files]
    if count > len(files):
        lines.append(f"- … and {count - len(files)} more")
    return "\n".join(lines)


MAX_PATH_SHOWN: Final = 200


def _short(path: str) -> str:
    """A path as a list shows it: a long one keeps its start and its end (its file's name)."""
    if len(path) <= MAX_PATH_SHOWN:
        return path
    half = MAX_PATH_SHOWN // 2 - 1
    return f"{path[:half]}…{path[-half:]}"


def _lines(stat: FileStat) -> str:
    added, removed = stat[1], stat[2]
    if not isinstance(added, int) or not isinstance(removed, int):
        return "(binary)"
    return f"(+{added} -{removed})"
