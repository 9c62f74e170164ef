"""A review as the host hands it to a forge to post (`Provider.post_review`). Pure values.

Every comment's anchor was checked by the host against the diff it computed itself, so a
provider posts what it is given: a comment on a line outside the diff never reaches it (the
summary carries those). Texts are already sanitised; the provider only adds its own markup
(a suggestion block, a hidden tag).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

Side = Literal["RIGHT", "LEFT"]
"""RIGHT: a line of the pull request's head (added or unchanged); LEFT: a line of its base
(removed or unchanged), as GitHub names the two sides of a diff."""
Verdict = Literal["comment", "request_changes"]
"""What a review says as a whole. A bot never approves: its approval must not count toward a
repository's merge rules."""
VERDICTS: Final = ("comment", "request_changes")
POST_REVIEW: Final = "post_review"
"""The callback action that posts a review job's review."""


@dataclass(frozen=True)
class DiffComment:
    """One comment on one line of the diff. `line` is on `side`; `old_line` and `new_line` are
    the same line's numbers in the base and the head, where it has one there (an unchanged
    line has both), as GitLab's positions need them."""

    path: str
    line: int
    side: Side
    body: str
    old_line: int | None = None
    new_line: int | None = None
    old_path: str | None = None
    """The file's path in the base, when the pull request renamed it."""
    suggestion: str | None = None
    """The text that replaces the line, which a person can apply with one click."""


@dataclass(frozen=True)
class ReviewPost:
    """One review of a pull request: the summary, the verdict and the anchored comments, on the
    commits the host diffed (`base_sha` the merge base, `start_sha` the base branch's tip,
    `head_sha` the head)."""

    summary: str
    verdict: Verdict
    comments: tuple[DiffComment, ...]
    head_sha: str
    base_sha: str
    start_sha: str
    tag: str
    """`review-<callback id>`: carried hidden in the summary, so a retry finds it posted."""


def suggestion_block(text: str) -> str:
    """A suggested change as GitHub, GitLab and Forgejo render one (a fence longer than any
    backtick run in the text, so the text cannot close it)."""
    fence = "`" * max(3, _backtick_run(text) + 1)
    return f"{fence}suggestion\n{text.rstrip(chr(10))}\n{fence}"


def _backtick_run(text: str) -> int:
    best = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        best = max(best, run)
    return best


# --- the diff's lines, as the host computed them


@dataclass(frozen=True)
class DiffLine:
    """A line a comment may be anchored to: its number in the base and in the head, where it
    has one (an added line has no old number, a removed one no new number)."""

    old_line: int | None
    new_line: int | None


DiffRow = tuple[str, int | None, int | None, str]
"""One line of a hunk as the diff shows it: its mark (" ", "+", "-"), old and new number, text."""
EXCERPT_LINES: Final = 3


@dataclass(frozen=True)
class FileDiff:
    """The lines of one file that the diff shows, by side, and its hunks' rows in order."""

    path: str
    old_path: str
    right: dict[int, DiffLine]
    left: dict[int, DiffLine]
    rows: list[DiffRow] = field(default_factory=list)

    def at(self, line: int, side: Side) -> DiffLine | None:
        return (self.right if side == "RIGHT" else self.left).get(line)

    def excerpt(self, line: int, side: Side, around: int = EXCERPT_LINES) -> list[DiffRow]:
        """The rows around a line of the diff (for people to see a comment beside its line)."""
        column = 2 if side == "RIGHT" else 1
        index = next((i for i, row in enumerate(self.rows) if row[column] == line), None)
        if index is None:
            return []
        return self.rows[max(0, index - around) : index + around + 1]


_HUNK: Final = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def diff_files(patch: str) -> dict[str, FileDiff]:
    """Every file of a unified diff (`git diff`) by its path in the head, with the lines its
    hunks show; a file without hunks (binary, a mode change) has none."""
    files: dict[str, FileDiff] = {}
    current: FileDiff | None = None
    old_path: str | None = None
    old = new = 0
    for text in patch.splitlines():
        if text.startswith("diff --git "):
            current = None
        elif text.startswith("--- ") and current is None:
            old_path = _diff_path(text[4:])
        elif text.startswith("+++ ") and current is None:
            path = _diff_path(text[4:]) or old_path
            current = FileDiff(path or "", old_path or path or "", {}, {})
            files[current.path] = current
        elif current is not None and (hunk := _HUNK.match(text)):
            old, new = int(hunk.group(1)), int(hunk.group(2))
        elif current is not None and text[:1] in (" ", "+", "-"):
            old, new = _take_line(current, text[0], old, new, text[1:])
    return files


def _take_line(file: FileDiff, mark: str, old: int, new: int, text: str) -> tuple[int, int]:
    if mark == "+":
        file.right[new] = DiffLine(None, new)
        file.rows.append((mark, None, new, text))
        return old, new + 1
    if mark == "-":
        file.left[old] = DiffLine(old, None)
        file.rows.append((mark, old, None, text))
        return old + 1, new
    file.right[new] = file.left[old] = DiffLine(old, new)
    file.rows.append((mark, old, new, text))
    return old + 1, new + 1


def _diff_path(text: str) -> str | None:
    """`a/src/x.py` → `src/x.py`; `/dev/null` → None (the file is new, or gone)."""
    text = text.rstrip("\t").strip()
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    if text == "/dev/null":
        return None
    return text[2:] if text[:2] in ("a/", "b/") else text
