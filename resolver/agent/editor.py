"""The agent's file editor: view, create, str_replace, insert and undo_edit.

Files are read and written through the sandbox (never on the host), so a symlink in the
repository cannot reach the host's files. Each edit pushes the previous content on a
per-file undo stack.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from sandbox import ExecResult

WORKDIR: Final = "/workspace"
SNIPPET_CONTEXT: Final = 4


class Files(Protocol):
    """The part of `sandbox.Sandbox` the editor uses."""

    def read_file(self, path: str) -> bytes: ...

    def write_file(self, path: str, data: bytes) -> None: ...

    def list_dir(self, path: str) -> list[str]: ...

    def run(
        self,
        command: str,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult: ...


class EditError(Exception):
    """An edit the model asked for cannot be done; the message tells it why and what to do."""


@dataclass(frozen=True)
class EditArgs:
    command: str
    path: str
    file_text: str | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    view_range: Sequence[int] | None = None

    @classmethod
    def from_dict(cls, args: dict[str, Any]) -> EditArgs:
        fields = ("file_text", "old_str", "new_str", "insert_line", "view_range")
        return cls(args["command"], args["path"], **{k: args.get(k) for k in fields})


def resolve_path(path: str) -> str:
    """The absolute path under /workspace; relative paths are taken from /workspace."""
    full = posixpath.normpath(posixpath.join(WORKDIR, path))
    if full != WORKDIR and not full.startswith(WORKDIR + "/"):
        raise EditError(f"{path} is outside {WORKDIR}; the editor only works on the repository")
    return full


def numbered(text: str, first_line: int = 1) -> str:
    """`cat -n` style lines."""
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.split("\n"), first_line))


class FileEditor:
    def __init__(self, files: Files, output_limit: int = 30_000) -> None:
        self._files = files
        self._limit = output_limit
        self._history: dict[str, list[bytes | None]] = {}

    def execute(self, args: EditArgs) -> str:
        """Run one editor command; raises EditError with a message meant for the model."""
        path = resolve_path(args.path)
        handlers = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "undo_edit": self._undo,
        }
        try:
            return handlers[args.command](path, args)
        except FileNotFoundError:
            raise EditError(f"{path} does not exist") from None
        except IsADirectoryError:
            raise EditError(f"{path} is a directory; only `view` works on directories") from None
        except (OSError, ValueError) as error:
            raise EditError(f"{path}: {error}") from None

    def _view(self, path: str, args: EditArgs) -> str:
        try:
            text = self._read_text(path)
        except IsADirectoryError:
            entries = self._files.list_dir(path)
            return f"Entries of {path}:\n" + ("\n".join(entries) or "(empty)")
        lines = text.split("\n")
        start, end = view_bounds(args.view_range, len(lines))
        shown = numbered("\n".join(lines[start - 1 : end]), start)
        if len(shown) > self._limit:
            cut = shown[: self._limit]
            return cut + "\n[... output cut; view a smaller view_range ...]"
        return shown

    def _create(self, path: str, args: EditArgs) -> str:
        if args.file_text is None:
            raise EditError("`create` needs `file_text`")
        previous = self._read_optional(path)
        self._write(path, args.file_text.encode(), previous)
        verb = "Overwrote" if previous is not None else "Created"
        return f"{verb} {path} ({len(args.file_text.splitlines())} lines)"

    def _str_replace(self, path: str, args: EditArgs) -> str:
        if not args.old_str:
            raise EditError("`str_replace` needs a non-empty `old_str`")
        text = self._read_text(path)
        count = text.count(args.old_str)
        if count == 0:
            raise EditError(
                f"No replacement was made: old_str does not occur verbatim in {path}. "
                "View the file and copy the text exactly, whitespace included."
            )
        if count > 1:
            lines = occurrence_lines(text, args.old_str)
            raise EditError(
                f"No replacement was made: old_str occurs {count} times in {path} (lines "
                f"{', '.join(map(str, lines))}). Include more context to make it unique."
            )
        new_str = args.new_str or ""
        updated = text.replace(args.old_str, new_str, 1)
        self._write(path, updated.encode(), text.encode())
        first = text[: text.index(args.old_str)].count("\n") + 1
        return f"Edited {path}:\n" + snippet(updated, first, new_str.count("\n") + 1)

    def _insert(self, path: str, args: EditArgs) -> str:
        if args.new_str is None or args.insert_line is None:
            raise EditError("`insert` needs `insert_line` and `new_str`")
        text = self._read_text(path)
        lines = text.split("\n")
        if not 0 <= args.insert_line <= len(lines):
            raise EditError(f"insert_line must be between 0 and {len(lines)}")
        new_lines = args.new_str.split("\n")
        updated = "\n".join([*lines[: args.insert_line], *new_lines, *lines[args.insert_line :]])
        self._write(path, updated.encode(), text.encode())
        return f"Inserted into {path}:\n" + snippet(updated, args.insert_line + 1, len(new_lines))

    def _undo(self, path: str, args: EditArgs) -> str:
        stack = self._history.get(path)
        if not stack:
            raise EditError(f"No edit of {path} to undo")
        previous = stack.pop()
        if previous is None:
            self._files.run(f"rm -f -- {shlex.quote(path)}", timeout=30)
            return f"Undid the creation of {path}; the file is removed"
        self._files.write_file(path, previous)
        return f"Undid the last edit of {path}"

    def _write(self, path: str, data: bytes, previous: bytes | None) -> None:
        self._files.write_file(path, data)
        self._history.setdefault(path, []).append(previous)

    def _read_optional(self, path: str) -> bytes | None:
        try:
            return self._files.read_file(path)
        except FileNotFoundError:
            return None

    def _read_text(self, path: str) -> str:
        data = self._files.read_file(path)
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise EditError(f"{path} is not UTF-8 text; use execute_bash for it") from None


def view_bounds(view_range: Sequence[int] | None, line_count: int) -> tuple[int, int]:
    """1-based inclusive bounds; an end of -1 means the last line."""
    if not view_range:
        return 1, line_count
    if len(view_range) != 2 or not all(type(n) is int for n in view_range):
        raise EditError("view_range must be two line numbers: [start, end]")
    start, end = view_range
    end = line_count if end == -1 else end
    if not 1 <= start <= line_count or not start <= end <= line_count:
        raise EditError(
            f"view_range {list(view_range)} is outside the file's 1..{line_count} lines"
        )
    return start, end


def occurrence_lines(text: str, needle: str) -> list[int]:
    lines, index = [], text.find(needle)
    while index != -1:
        lines.append(text.count("\n", 0, index) + 1)
        index = text.find(needle, index + 1)
    return lines


def snippet(text: str, first_line: int, line_count: int) -> str:
    """The edited lines with a few lines of context, numbered."""
    lines = text.split("\n")
    start = max(1, first_line - SNIPPET_CONTEXT)
    end = min(len(lines), first_line + line_count - 1 + SNIPPET_CONTEXT)
    return numbered("\n".join(lines[start - 1 : end]), start)
