"""Reviews on request: which requests ask for one, the repository's `review` settings, where
each of the model's comments may go, and the review's summary. Pure.

`.resolver/config.yml` on the default branch opts a repository into reviews on its own:

    review:
      auto: true            # review pull requests when opened, marked ready, or pushed to
      paths: ["src/**"]     # only these files (default: every file)
      ignore: ["docs/**"]   # never these
      skip_drafts: true     # (default) not while a draft
      max_files: 50         # no auto-review of a larger change
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from resolver.contract.inbound import Trigger
from resolver.contract.outbound import fit_body
from resolver.contract.review import DiffComment, DiffRow, FileDiff, Side, Verdict
from resolver.contract.triggers import JsonObject, PullRequest, ReviewRequest

REVIEW_KEY: Final = "review"
RESULT_KEY: Final = "review"
"""The job result's entry: the review the host built (`ReviewResult.as_dict`)."""
MAX_COMMENTS: Final = 30
MAX_COMMENT_CHARS: Final = 4_000
MAX_SUMMARY_CHARS: Final = 12_000
MAX_SUGGESTION_CHARS: Final = 8_000
"""A comment's suggested change longer than this is left out (with a word saying so): with its
comment it must fit one forge comment."""

# "review", "review this PR please", "can you review the merge request?", "review again",
# "give this a quick review": the word review and only words that point at the pull request.
_REVIEW_WORDS: Final = re.compile(r"[a-z]+")
_FILLER: Final = frozenset(
    {
        *("please", "pls", "can", "could", "would", "you", "this", "the", "my", "our", "it"),
        *("pr", "mr", "pull", "merge", "request", "change", "changes", "code", "diff"),
        *("again", "a", "an", "quick", "full", "do", "give", "take", "look", "at", "over"),
        *("another", "new", "me", "for", "now"),
    }
)


def asks_for_review(task: str) -> bool:
    """Whether a request asks the bot to review the pull request (rather than change it)."""
    words = _REVIEW_WORDS.findall(task.lower())
    if not words or len(words) > 10 or not {"review", "re"} & set(words):
        return False
    return all(w in _FILLER or w in ("review", "re") for w in words)


def as_review_request(trigger: Trigger) -> Trigger:
    """A mention on a pull request that asks for a review, as a review request; any other
    trigger as it is."""
    subject = trigger.subject
    if type(subject) is not PullRequest or not asks_for_review(trigger.task):
        return trigger
    fields = subject.model_dump(exclude={"kind"})
    return replace(trigger, subject=ReviewRequest.model_validate(fields))


# --- the repository's settings


class ReviewConfigError(ValueError):
    """`review` in `.resolver/config.yml` is not what the README describes."""


@dataclass(frozen=True)
class ReviewConfig:
    auto: bool = False
    paths: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    skip_drafts: bool = True
    max_files: int = 50

    def covers(self, path: str) -> bool:
        """Whether a file of the change is reviewed (in `paths`, when given; not ignored)."""
        if self.paths and not any(fnmatch.fnmatch(path, p) for p in self.paths):
            return False
        return not any(fnmatch.fnmatch(path, p) for p in self.ignore)


def parse_review_config(repo_config: Mapping[str, object]) -> ReviewConfig:
    """The repository's `review` settings (no auto-review when absent), or ReviewConfigError."""
    value = repo_config.get(REVIEW_KEY)
    if value is None:
        return ReviewConfig()
    if not isinstance(value, Mapping):
        raise ReviewConfigError("`review` must be a mapping, like `review: {auto: true}`")
    known = {"auto", "paths", "ignore", "skip_drafts", "max_files"}
    unknown = sorted(str(key) for key in value if key not in known)
    if unknown:
        raise ReviewConfigError(f"`review` has unknown keys: {', '.join(unknown)}")
    return ReviewConfig(
        auto=_flag(value, "auto", False),
        paths=_patterns(value, "paths"),
        ignore=_patterns(value, "ignore"),
        skip_drafts=_flag(value, "skip_drafts", True),
        max_files=_count(value, "max_files", 50),
    )


def _flag(value: Mapping[Any, object], key: str, default: bool) -> bool:
    found = value.get(key, default)
    if not isinstance(found, bool):
        raise ReviewConfigError(f"`review.{key}` must be true or false")
    return found


def _patterns(value: Mapping[Any, object], key: str) -> tuple[str, ...]:
    found = value.get(key, [])
    if not isinstance(found, list) or not all(isinstance(p, str) and p for p in found):
        raise ReviewConfigError(f"`review.{key}` must be a list of path patterns")
    return tuple(found)


def _count(value: Mapping[Any, object], key: str, default: int) -> int:
    found = value.get(key, default)
    if isinstance(found, bool) or not isinstance(found, int) or found < 1:
        raise ReviewConfigError(f"`review.{key}` must be a positive whole number")
    return found


# --- the model's comments, checked against the diff


@dataclass(frozen=True)
class Remark:
    """A comment as the model left it (the `comment` tool's arguments)."""

    path: str
    line: int
    side: Side
    body: str
    suggestion: str | None = None

    @property
    def where(self) -> str:
        side = "" if self.side == "RIGHT" else " (the old side)"
        return f"`{self.path}` line {self.line}{side}"


def remarks_of(calls: Iterable[Mapping[str, Any]]) -> list[Remark]:
    """The comments the trajectory recorded (each `comment` call's checked arguments)."""
    found = []
    for call in calls:
        path, line, body = call.get("path"), call.get("line"), call.get("body")
        if not (isinstance(path, str) and isinstance(line, int) and isinstance(body, str)):
            continue
        side: Side = "LEFT" if call.get("side") == "LEFT" else "RIGHT"
        suggestion = call.get("suggestion")
        text = suggestion if isinstance(suggestion, str) and side == "RIGHT" else None
        found.append(Remark(path.strip().lstrip("/"), line, side, body.strip(), text))
    return found


def place(
    remarks: Iterable[Remark],
    files: Mapping[str, FileDiff],
    allowed: Mapping[str, FileDiff] | None = None,
) -> tuple[tuple[DiffComment, ...], tuple[Remark, ...]]:
    """The comments anchored to lines the diff shows, and the rest (for the summary). With
    `allowed` (the lines since the last review), only its lines of the head may be anchored."""
    placed: list[DiffComment] = []
    outside: list[Remark] = []
    for remark in remarks:
        file = files.get(remark.path)
        line = file.at(remark.line, remark.side) if file is not None else None
        if allowed is not None and not _among(allowed, remark):
            line = None
        if file is None or line is None or len(placed) >= MAX_COMMENTS:
            outside.append(remark)
            continue
        body, suggestion = remark.body[:MAX_COMMENT_CHARS], remark.suggestion
        if suggestion is not None and len(suggestion) > MAX_SUGGESTION_CHARS:
            # Cut, it would be a wrong change to apply: the comment goes without it.
            body, suggestion = f"{body}\n\n(A suggested change was too long to show.)", None
        placed.append(
            DiffComment(
                path=remark.path,
                line=remark.line,
                side=remark.side,
                body=body,
                old_line=line.old_line,
                new_line=line.new_line,
                old_path=file.old_path if file.old_path != file.path else None,
                suggestion=suggestion,
            )
        )
    return tuple(placed), tuple(outside)


def _among(allowed: Mapping[str, FileDiff], remark: Remark) -> bool:
    file = allowed.get(remark.path)
    return remark.side == "RIGHT" and file is not None and remark.line in file.right


def reviewed_files(files: Mapping[str, FileDiff], config: ReviewConfig) -> dict[str, FileDiff]:
    """The files of the change the repository's settings review."""
    return {path: file for path, file in files.items() if config.covers(path)}


# --- what the review says


@dataclass(frozen=True)
class ReviewResult:
    """The review the host built after the agent: kept on the job, posted by the callback."""

    summary: str
    verdict: Verdict
    comments: tuple[DiffComment, ...]
    head_sha: str
    base_sha: str
    start_sha: str
    since: str | None = None
    excerpts: tuple[tuple[DiffRow, ...], ...] = ()
    """For each comment, the diff's rows around its line (the job page shows it there)."""

    def as_dict(self) -> JsonObject:
        """As a job's result keeps it (`JobResult.review`); `read_review` reads it back."""
        return {
            "summary": self.summary,
            "verdict": self.verdict,
            "comments": [vars(c) for c in self.comments],
            "head_sha": self.head_sha,
            "base_sha": self.base_sha,
            "start_sha": self.start_sha,
            "since": self.since,
            "excerpts": [[list(row) for row in rows] for rows in self.excerpts],
        }


def read_review(data: object) -> ReviewResult | None:
    """The review a job's result keeps; None when it has none."""
    if not isinstance(data, Mapping) or not isinstance(data.get("summary"), str):
        return None
    verdict = data.get("verdict")
    comments = data.get("comments")
    return ReviewResult(
        summary=str(data["summary"]),
        verdict=verdict_of(verdict),
        comments=tuple(DiffComment(**c) for c in comments if isinstance(c, dict))
        if isinstance(comments, list)
        else (),
        head_sha=str(data.get("head_sha") or ""),
        base_sha=str(data.get("base_sha") or ""),
        start_sha=str(data.get("start_sha") or ""),
        since=_text(data.get("since")),
        excerpts=_excerpts(data.get("excerpts")),
    )


def _excerpts(value: object) -> tuple[tuple[DiffRow, ...], ...]:
    if not isinstance(value, list):
        return ()
    return tuple(
        tuple(
            (str(r[0]), _number(r[1]), _number(r[2]), str(r[3]))
            for r in rows
            if isinstance(r, list) and len(r) == 4
        )
        for rows in value
        if isinstance(rows, list)
    )


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def verdict_of(value: object) -> Verdict:
    return "request_changes" if value == "request_changes" else "comment"


def render_summary(
    said: str,
    verdict: Verdict,
    outside: Iterable[Remark],
    verification: str,
    since: str | None = None,
) -> str:
    """The review's body: what the model said, the comments that had no line in the diff, what
    it reviewed (all of it, or only what changed since its last review), and what it ran (the
    Verification block, rendered by the caller)."""
    parts = [said.strip()[:MAX_SUMMARY_CHARS] or "I have no comments on this change."]
    if verdict == "request_changes":
        parts.insert(0, "**Changes requested.**")
    left = list(outside)
    if left:
        lines = [f"- {r.where}: {r.body[:MAX_COMMENT_CHARS]}" for r in left]
        parts.append("Comments on lines outside the diff:\n" + "\n".join(lines))
    if since:
        parts.append(f"I reviewed only what changed since my last review ({since[:12]}).")
    if verification:
        parts.append(verification)
    return fit_body("\n\n".join(parts))
