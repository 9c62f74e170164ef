"""The agent's change as the host receives it: a tar stream read with caps and checked entry by
entry. Pure: it takes a byte stream and returns plain values.

The stream's first member, `deleted`, lists the deleted paths (NUL-separated); every other
member is a new or changed file. Only regular files and symlinks are taken, symlinks as their
link text; no path may be absolute, climb with `..`, or touch `.git`. Sizes are checked from
each member's header before its data is read.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Final, Literal, Protocol, cast

Mode = Literal["100644", "100755", "120000"]

MANIFEST: Final = "deleted"
MAX_PATH: Final = 4096
# A tar member costs a header (with a pax header for long names) besides its data.
_PER_MEMBER_OVERHEAD: Final = 4 * 1024
_TAIL_OVERHEAD: Final = 64 * 1024


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class ChangeRejectedError(Exception):
    """The change breaks a rule (a path, a file type, a cap); the message tells the user which."""


@dataclass(frozen=True)
class ExportLimits:
    """Caps on what a change may hold."""

    max_files: int = 1000
    max_file_bytes: int = 10 * 2**20
    max_total_bytes: int = 50 * 2**20
    timeout: float = 300.0

    @property
    def max_stream_bytes(self) -> int:
        """The most a valid change can take on the wire, manifest and tar headers included."""
        manifest = self.max_files * (MAX_PATH + 1)
        headers = (self.max_files + 1) * _PER_MEMBER_OVERHEAD
        return self.max_total_bytes + manifest + headers + _TAIL_OVERHEAD


@dataclass(frozen=True)
class ChangedFile:
    """A new or changed path: its git mode and its bytes (for a symlink, the link's text)."""

    path: str
    mode: Mode
    data: bytes


@dataclass(frozen=True)
class Change:
    """What the agent changed against the base commit."""

    files: tuple[ChangedFile, ...] = ()
    deleted: tuple[str, ...] = ()
    stopped_processes: int = 0
    """Processes the agent left running, stopped before its work was read."""
    skipped: tuple[str, ...] = field(default=())
    """Nested repositories in the work tree, never part of a change."""

    @property
    def empty(self) -> bool:
        return not self.files and not self.deleted


def check_path(path: str) -> str:
    """The path itself when it may be part of a change; ChangeRejectedError says why not."""
    shown = repr(path)[:120]
    if not path or len(path) > MAX_PATH:
        raise ChangeRejectedError(f"the path {shown} is empty or too long")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ChangeRejectedError(f"the path {shown} is not UTF-8") from None
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        raise ChangeRejectedError(f"the path {shown} holds a control character")
    if path.startswith("/"):
        raise ChangeRejectedError(f"the path {shown} is absolute")
    for part in path.split("/"):
        if part in ("", ".", ".."):
            raise ChangeRejectedError(f"the path {shown} is not a plain relative path")
        if part.rstrip(". ").lower() == ".git":
            raise ChangeRejectedError(f"the path {shown} is inside .git")
    return path


def read_change(stream: Readable, limits: ExportLimits) -> Change:
    """Read and check the exporter's tar stream; raise ChangeRejectedError on the first fault."""
    fileobj = cast(IO[bytes], stream)
    try:
        with tarfile.open(fileobj=fileobj, mode="r|", errors="surrogateescape") as archive:
            members = iter(archive)
            deleted = _manifest(archive, next(members, None), limits)
            files = tuple(_files(archive, members, limits, len(deleted)))
    except tarfile.TarError as error:
        raise ChangeRejectedError(f"the change could not be read: {error}") from None
    paths = {changed.path for changed in files}
    both = paths.intersection(deleted)
    if both:
        raise ChangeRejectedError(f"the path {sorted(both)[0]!r} is both deleted and changed")
    return Change(files=files, deleted=deleted)


def _manifest(
    archive: tarfile.TarFile, member: tarfile.TarInfo | None, limits: ExportLimits
) -> tuple[str, ...]:
    if member is None or member.name != MANIFEST or not member.isreg():
        raise ChangeRejectedError("the change could not be read: its list of deletions is missing")
    if member.size > limits.max_files * (MAX_PATH + 1):
        raise ChangeRejectedError(f"the change deletes more than {limits.max_files} files")
    data = _data(archive, member)
    names = [name for name in data.split(b"\0") if name]
    if len(names) > limits.max_files:
        raise ChangeRejectedError(f"the change deletes more than {limits.max_files} files")
    paths = [check_path(name.decode("utf-8", "surrogateescape")) for name in names]
    return tuple(sorted(set(paths)))


def _files(
    archive: tarfile.TarFile,
    members: Iterator[tarfile.TarInfo],
    limits: ExportLimits,
    deleted: int,
) -> Iterable[ChangedFile]:
    seen: set[str] = set()
    total = 0
    for member in members:
        path = check_path(member.name)
        if path in seen:
            raise ChangeRejectedError(f"the path {path!r} appears twice in the change")
        seen.add(path)
        if len(seen) + deleted > limits.max_files:
            raise ChangeRejectedError(f"the change touches more than {limits.max_files} files")
        changed = _changed_file(archive, member, path, limits)
        total += len(changed.data)
        if total > limits.max_total_bytes:
            raise ChangeRejectedError(
                f"the change is larger than {describe_size(limits.max_total_bytes)} in all"
            )
        yield changed


def _changed_file(
    archive: tarfile.TarFile, member: tarfile.TarInfo, path: str, limits: ExportLimits
) -> ChangedFile:
    if member.issym():
        target = member.linkname.encode("utf-8", "surrogateescape")
        if not target or len(target) > MAX_PATH:
            raise ChangeRejectedError(f"the symlink {path!r} has an empty or too long target")
        return ChangedFile(path, "120000", target)
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):  # no sparse or contiguous files
        raise ChangeRejectedError(f"{path!r} is not a regular file or a symlink")
    if member.size > limits.max_file_bytes:
        raise ChangeRejectedError(
            f"`{path}` is {describe_size(member.size)}, over the limit of "
            f"{describe_size(limits.max_file_bytes)} per file"
        )
    mode: Mode = "100755" if member.mode & 0o100 else "100644"
    return ChangedFile(path, mode, _data(archive, member))


def _data(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    extracted = archive.extractfile(member)
    data = extracted.read() if extracted is not None else b""
    if len(data) != member.size:
        raise ChangeRejectedError(f"the change could not be read: {member.name!r} is cut short")
    return data


def describe_size(size: int) -> str:
    """`1.0 GB`, `10 MB`, `512 bytes`: sizes as people read them (powers of 1024)."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
