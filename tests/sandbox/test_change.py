"""Reading a change: every entry is checked before it is used, and sizes before data. Pure."""

from __future__ import annotations

import io
import tarfile

import pytest

from sandbox import ChangeRejectedError, ExportLimits, check_path
from sandbox.change import describe_size, read_change

Entry = tuple[str, bytes | str, bytes]  # name, type, data (or link target)


def stream(deleted: list[str], entries: list[Entry], manifest: str = "deleted") -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        listing = b"".join(path.encode() + b"\0" for path in deleted)
        head = tarfile.TarInfo(manifest)
        head.size = len(listing)
        tar.addfile(head, io.BytesIO(listing))
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            info.type = kind if isinstance(kind, bytes) else tarfile.REGTYPE
            info.mode = 0o755 if kind == "exec" else 0o644
            if info.type == tarfile.SYMTYPE or info.type == tarfile.LNKTYPE:
                info.linkname = data.decode()
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def test_files_links_and_deletions_are_read() -> None:
    change = read_change(
        stream(
            ["gone.txt"],
            [
                ("a.py", "file", b"x = 1\n"),
                ("bin/run", "exec", b"#!/bin/sh\n"),
                ("link", tarfile.SYMTYPE, b"../../../etc/passwd"),
            ],
        ),
        ExportLimits(),
    )
    assert [(f.path, f.mode, f.data) for f in change.files] == [
        ("a.py", "100644", b"x = 1\n"),
        ("bin/run", "100755", b"#!/bin/sh\n"),
        ("link", "120000", b"../../../etc/passwd"),
    ]
    assert change.deleted == ("gone.txt",)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute"),
        ("../up", "plain relative"),
        ("a/../../b", "plain relative"),
        ("a//b", "plain relative"),
        (".git/config", "inside .git"),
        ("sub/.GIT/hooks/pre-commit", "inside .git"),
        (".git./config", "inside .git"),
        ("new\nline", "control character"),
        ("bad\udcff", "not UTF-8"),
        ("", "empty"),
    ],
)
def test_unsafe_paths_are_refused(path: str, reason: str) -> None:
    with pytest.raises(ChangeRejectedError, match=reason):
        check_path(path)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (("dev", tarfile.CHRTYPE, b""), "not a regular file"),
        (("dir", tarfile.DIRTYPE, b""), "not a regular file"),
        (("hard", tarfile.LNKTYPE, b"a.py"), "not a regular file"),
        (("fifo", tarfile.FIFOTYPE, b""), "not a regular file"),
        (("../escape", "file", b"x"), "plain relative"),
        (("empty-link", tarfile.SYMTYPE, b""), "empty or too long target"),
    ],
)
def test_entries_other_than_files_and_links_are_refused(entry: Entry, reason: str) -> None:
    with pytest.raises(ChangeRejectedError, match=reason):
        read_change(stream([], [("a.py", "file", b"1"), entry]), ExportLimits())


def test_caps_are_checked_from_the_headers() -> None:
    limits = ExportLimits(max_files=2, max_file_bytes=10, max_total_bytes=15)
    with pytest.raises(ChangeRejectedError, match=r"`big` is 11 bytes, over the limit of 10"):
        read_change(stream([], [("big", "file", b"x" * 11)]), limits)
    with pytest.raises(ChangeRejectedError, match="larger than 15 bytes in all"):
        read_change(stream([], [("a", "file", b"x" * 8), ("b", "file", b"y" * 8)]), limits)
    with pytest.raises(ChangeRejectedError, match="more than 2 files"):
        read_change(stream(["c"], [("a", "file", b"1"), ("b", "file", b"2")]), limits)


def test_a_stream_without_its_manifest_or_with_duplicates_is_refused() -> None:
    with pytest.raises(ChangeRejectedError, match="list of deletions is missing"):
        read_change(stream([], [("a", "file", b"1")], manifest="other"), ExportLimits())
    with pytest.raises(ChangeRejectedError, match="appears twice"):
        read_change(stream([], [("a", "file", b"1"), ("a", "file", b"2")]), ExportLimits())
    with pytest.raises(ChangeRejectedError, match="both deleted and changed"):
        read_change(stream(["a"], [("a", "file", b"1")]), ExportLimits())
    with pytest.raises(ChangeRejectedError, match="could not be read"):
        read_change(io.BytesIO(b"not a tar at all" * 100), ExportLimits())


def test_sizes_read_as_people_read_them() -> None:
    assert describe_size(2**30) == "1 GB"
    assert describe_size(3 * 2**20 // 2) == "1.5 MB"
    assert describe_size(512) == "512 bytes"
