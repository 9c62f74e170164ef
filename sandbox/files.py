"""Files under /workspace, through the engine's archive API so binary and large files work.

The archive API resolves paths inside the container, never on the host, so a symlink in a
workspace cannot reach the host's files.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from typing import IO, Any, Final

import docker.utils

from sandbox.engine import SandboxError, SandboxNotFoundError, client, engine_errors
from sandbox.execution import capture
from sandbox.policy import WORKDIR

_MAX_LINKS: Final = 16
MAX_READ_BYTES: Final = 10 * 2**20
"""The largest file brought to the host whole (the agent's editor reads through here); the
size is the engine's, checked before the read, and the read itself stops past it."""
_TAR_OVERHEAD: Final = 64 * 1024
_GO_MODE_DIR: Final = 1 << 31
_GO_MODE_SYMLINK: Final = 1 << 27
# Go's os.ModeType: dir, symlink, device, named pipe, socket, char device, irregular.
_GO_MODE_TYPE: Final = sum(1 << bit for bit in (31, 27, 26, 25, 24, 21, 19))
_FILE_MODE: Final = 0o644
_DIR_MODE: Final = 0o755
# The entries of directory $1 as <type><name>\0; exit codes tell the usual errors apart.
_LIST: Final = r"""
[ -e "$1" ] || { echo "no such directory" >&2; exit 2; }
[ -d "$1" ] || { echo "not a directory" >&2; exit 20; }
cd -- "$1" 2>&1 && exec find . -mindepth 1 -maxdepth 1 -printf '%y%f\0'
exit 13
"""
_LIST_ERRORS: Final[dict[int, type[OSError]]] = {
    2: FileNotFoundError,
    20: NotADirectoryError,
    13: PermissionError,
}


def workspace_path(path: str) -> str:
    """The absolute, normalised form of `path`; anything outside /workspace is refused."""
    full = posixpath.normpath(posixpath.join(WORKDIR, path))
    if full != WORKDIR and not full.startswith(WORKDIR + "/"):
        raise ValueError(f"path outside {WORKDIR}: {path!r}")
    return full


def read_file(container_id: str, path: str) -> bytes:
    """The file's bytes; a symlink is followed while it stays inside /workspace."""
    full = workspace_path(path)
    for _ in range(_MAX_LINKS):
        stat = _stat(container_id, full)
        if stat is None:
            raise FileNotFoundError(full)
        kind = _kind(stat)
        if kind == "file":
            if int(stat.get("size") or 0) > MAX_READ_BYTES:
                raise OSError(_too_large(full))
            return _download(container_id, full)
        if kind == "dir":
            raise IsADirectoryError(full)
        if kind != "link":
            raise OSError(f"not a regular file: {full}")
        full = workspace_path(posixpath.join(posixpath.dirname(full), stat["linkTarget"]))
    raise OSError(f"too many levels of symbolic links: {path}")


def write_file(container_id: str, path: str, data: bytes, uid: int) -> None:
    """Create or replace a file owned by the sandbox user; missing parent directories are made."""
    full = workspace_path(path)
    if full == WORKDIR:
        raise IsADirectoryError(full)
    parent, name = posixpath.split(full)
    # A rewrite keeps the file's mode, so a script stays executable.
    stat = _stat(container_id, full)
    mode = int(stat["mode"]) & 0o777 if stat and _kind(stat) == "file" else _FILE_MODE
    try:
        with engine_errors("write file"):
            _put(container_id, parent, _tar([], name, data, mode, uid))
    except SandboxNotFoundError:
        # The parent is missing: send the directories along (existing ones get mode 755).
        dirs = posixpath.relpath(parent, WORKDIR).split("/")
        with engine_errors("write file"):
            _put(container_id, WORKDIR, _tar(dirs, name, data, mode, uid))


def list_dir(container_id: str, path: str, uid: int) -> list[str]:
    """The entries of a directory, sorted; directories carry a trailing slash."""
    full = workspace_path(path)
    code, output = capture(container_id, ["bash", "-c", _LIST, "bash", full], uid)
    if code != 0:
        message = output.decode(errors="replace").strip()
        raise _LIST_ERRORS.get(code, OSError)(f"{full}: {message}")
    entries = [item.decode(errors="replace") for item in output.split(b"\0") if item]
    return sorted(name[1:] + ("/" if name[0] == "d" else "") for name in entries)


def put_tree(container_id: str, archive: IO[bytes]) -> None:
    """Unpack a tar archive into /workspace; the engine keeps its members' owners and modes."""
    with engine_errors("load workspace"):
        if not client().api.put_archive(container_id, WORKDIR, archive):
            raise OSError(f"the engine refused to write into {WORKDIR}")


def _too_large(full: str) -> str:
    return (
        f"{full} is larger than {MAX_READ_BYTES // 2**20} MB; read a part of it with "
        "execute_bash (head, sed -n, grep)"
    )


def _download(container_id: str, full: str) -> bytes:
    received = bytearray()
    try:
        with engine_errors("read file"):
            chunks, _stat = client().api.get_archive(container_id, full)
            for chunk in chunks:  # the file may have grown since its stat
                received += chunk
                if len(received) > MAX_READ_BYTES + _TAR_OVERHEAD:
                    break
    except SandboxNotFoundError:
        raise FileNotFoundError(full) from None
    if len(received) > MAX_READ_BYTES + _TAR_OVERHEAD:
        raise OSError(_too_large(full))
    archive = bytes(received)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        member = tar.next()
        extracted = tar.extractfile(member) if member else None
        if extracted is None:
            raise OSError(f"the engine sent no file for {full}")
        return extracted.read()


def _stat(container_id: str, full: str) -> dict[str, Any] | None:
    """The engine's stat of a path (without following a final symlink); None when missing."""
    api: Any = client().api
    # docker-py has no call for the archive API's HEAD (a stat), so it is made directly.
    with engine_errors("stat file"):
        response = api.head(
            api._url("/containers/{0}/archive", container_id),
            params={"path": full},
            timeout=api.timeout,
        )
    if response.status_code == 404:
        return None
    header = response.headers.get("X-Docker-Container-Path-Stat")
    if response.status_code != 200 or not header:
        raise SandboxError(f"stat {full}: the engine answered {response.status_code}")
    stat: dict[str, Any] = docker.utils.decode_json_header(header)
    return stat


def _kind(stat: dict[str, Any]) -> str:
    # Go's os.FileMode keeps the file type in its high bits.
    mode = int(stat["mode"])
    if mode & _GO_MODE_DIR:
        return "dir"
    if mode & _GO_MODE_SYMLINK:
        return "link"
    return "other" if mode & _GO_MODE_TYPE else "file"


def _tar(dirs: list[str], name: str, data: bytes, mode: int, uid: int) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for depth in range(1, len(dirs) + 1):
            entry = tarfile.TarInfo("/".join(dirs[:depth]))
            entry.type, entry.mode, entry.uid, entry.gid = tarfile.DIRTYPE, _DIR_MODE, uid, uid
            tar.addfile(entry)
        entry = tarfile.TarInfo("/".join([*dirs, name]))
        entry.size, entry.mode, entry.uid, entry.gid = len(data), mode, uid, uid
        tar.addfile(entry, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def _put(container_id: str, directory: str, archive: io.BytesIO) -> None:
    if not client().api.put_archive(container_id, directory, archive.getvalue()):
        raise OSError(f"the engine refused to write into {directory}")
