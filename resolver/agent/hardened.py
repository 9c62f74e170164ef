"""Git on the host, hardened: what every host git command runs with.

No system or global config, an empty HOME, no hooks, no fsmonitor, no credential helper or
askpass, no signing, and only one protocol: the repository's own. The environment is built from
nothing but PATH and the operator's network settings, so nothing of the worker's (a token, a
GIT_* variable) reaches git unless a caller passes it for that one command.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

GIT_TIMEOUT: Final = 600
# The operator's own network settings, which git and curl read from the environment.
_PASSED_THROUGH: Final = (
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
)


class RepoError(Exception):
    """A git step failed; the message says which and why."""


def protocol_of(source: str) -> str:
    """The one git protocol a repository's URL needs; local paths are `file`."""
    scheme = urlsplit(source).scheme
    if scheme in ("http", "https", "file"):
        return scheme
    if not scheme or Path(source).expanduser().exists():
        return "file"
    raise RepoError(f"cannot use {source!r}: give a local path or an http(s) URL")


def _argv(protocol: str) -> list[str]:
    return [
        "git",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "credential.helper=",
        "-c",
        "core.askPass=",
        "-c",
        "protocol.allow=never",
        "-c",
        f"protocol.{protocol}.allow=always",
        "-c",
        "commit.gpgSign=false",
        "-c",
        "push.gpgSign=false",
        "-c",
        "gc.auto=0",
    ]


@lru_cache(maxsize=1)
def _empty_home() -> tempfile.TemporaryDirectory[str]:
    """One empty, private directory per process, removed when the process exits."""
    return tempfile.TemporaryDirectory(prefix="resolver-git-home-")


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    """A scrubbed environment: nothing of the worker's own, but its PATH and network settings."""
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.update(
        {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": _empty_home().name,
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
        }
    )
    env.update(extra)
    return env


def run_git(
    protocol: str,
    args: list[str],
    *,
    cwd: Path,
    auth: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    limit: int | None = None,
    success: frozenset[int] = frozenset({0}),
) -> bytes:
    """Run hardened git allowing `protocol` only; `limit` cuts stdout at that many bytes (the
    rest is not read); `success` are the exit codes that are answers, not failures."""
    argv = [*_argv(protocol), *args]
    environment = _environment({**(auth or {}), **(env or {})})
    with subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
        cwd=cwd,
    ) as process:
        if limit is not None:
            return _read_limited(process, limit)
        try:
            out, err = process.communicate(stdin, timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            raise RepoError(f"git {_verb(args)} took longer than {GIT_TIMEOUT}s") from None
    if process.returncode not in success:
        message = err.decode(errors="replace").strip() or out.decode(errors="replace").strip()
        raise RepoError(f"git {_verb(args)} failed: {message[:2000]}")
    return out


def _read_limited(process: subprocess.Popen[bytes], limit: int) -> bytes:
    if process.stdout is None or process.stderr is None:
        raise RepoError("git ran without its output")
    out = process.stdout.read(limit)
    if len(out) >= limit:
        process.kill()  # the rest is not wanted
        process.wait(GIT_TIMEOUT)
        return out
    err = process.stderr.read(4000)
    if process.wait(GIT_TIMEOUT) != 0:
        raise RepoError(f"git failed: {err.decode(errors='replace').strip()}")
    return out


def _verb(args: list[str]) -> str:
    rest = args[2:] if args[:1] == ["--git-dir"] else args
    return rest[0] if rest else "?"
