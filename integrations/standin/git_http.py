"""Real bare repositories served over smart HTTP by `git http-backend`, behind token auth.

    with GitHttpServer(root, tokens={"s3cret"}) as server:
        create_bare_repo(root, "octo/widgets", {"README.md": "hi\\n"})
        url = server.url_for("octo/widgets")   # http://127.0.0.1:PORT/octo/widgets.git

Every request needs HTTP Basic auth whose password is an accepted token (any username, as with
GitHub's `x-access-token`); anything else gets 401, so git fails the way it would on a forge.
"""

from __future__ import annotations

import base64
import binascii
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from io import BufferedIOBase
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from integrations.standin.server import Loopback, LoopbackHandler, LoopbackServer

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
IDENTITY = ("-c", "user.name=Test Author", "-c", "user.email=author@example.test")
COPY_CHUNK = 64 * 1024


@dataclass(frozen=True)
class GitRequest:
    """What one HTTP request to the git server was: method, path, Basic user, answer status."""

    method: str
    path: str
    user: str | None
    status: int


def run_git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run git with prompts off; raise CalledProcessError (stderr kept) when it fails."""
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    )
    return done.stdout


def create_bare_repo(
    root: Path, full_name: str, files: dict[str, str] | None = None, branch: str = "main"
) -> Path:
    """`root/<owner>/<name>.git` with one commit of `files` on `branch`."""
    bare = root / f"{full_name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    run_git("init", "--quiet", "--bare", f"--initial-branch={branch}", str(bare))
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        run_git("init", "--quiet", f"--initial-branch={branch}", cwd=work)
        for name, text in (files or {"README.md": f"# {full_name}\n"}).items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        run_git("add", "-A", cwd=work)
        run_git(*IDENTITY, "commit", "--quiet", "-m", "Initial commit", cwd=work)
        run_git("push", "--quiet", str(bare), f"HEAD:refs/heads/{branch}", cwd=work)
    return bare


def branch_head(bare: Path, branch: str) -> str | None:
    """The commit a branch of a bare repository points at, or None without such a branch."""
    done = subprocess.run(
        ["git", "-C", str(bare), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None


def _basic_credentials(header: str | None) -> tuple[str, str] | None:
    if not header or not header.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:], validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


def _copy_chunked(source: BufferedIOBase, sink: IO[bytes]) -> None:
    """Decode an HTTP/1.1 chunked body (git uses it for pushes above http.postBuffer)."""
    while True:
        size = int(source.readline().split(b";")[0].strip(), 16)
        if size == 0:
            source.readline()
            return
        remaining = size
        while remaining:
            data = source.read(min(remaining, COPY_CHUNK))
            if not data:
                return
            sink.write(data)
            remaining -= len(data)
        source.readline()


def _copy_length(source: BufferedIOBase, sink: IO[bytes], length: int) -> None:
    while length > 0:
        data = source.read(min(length, COPY_CHUNK))
        if not data:
            return
        sink.write(data)
        length -= len(data)


class _Handler(LoopbackHandler):
    server: LoopbackServer[GitHttpServer]

    def answer(self) -> None:
        git = self.server.owner
        credentials = _basic_credentials(self.headers.get("Authorization"))
        url = urlsplit(self.path)
        if credentials is None or not git.allows(credentials[1], url.path):
            git.record(GitRequest(self.command, url.path, None, 401))
            self._unauthorized()
            return
        status = self._run_backend(url.path, url.query, credentials[0])
        git.record(GitRequest(self.command, url.path, credentials[0], status))

    def _unauthorized(self) -> None:
        body = b"Authentication required\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _cgi_env(self, path: str, query: str, user: str) -> dict[str, str]:
        env = {
            **os.environ,
            "GIT_PROJECT_ROOT": str(self.server.owner.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "REMOTE_USER": user,
            "REMOTE_ADDR": self.client_address[0],
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        if length := self.headers.get("Content-Length"):
            env["CONTENT_LENGTH"] = length
        if encoding := self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = encoding
        if protocol := self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = protocol
        return env

    def _feed(self, stdin: IO[bytes]) -> None:
        try:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                _copy_chunked(self.rfile, stdin)
            else:
                _copy_length(self.rfile, stdin, int(self.headers.get("Content-Length") or 0))
        except BrokenPipeError:
            pass  # the backend stopped reading; its own answer says why
        finally:
            stdin.close()

    def _run_backend(self, path: str, query: str, user: str) -> int:
        process = subprocess.Popen(
            ["git", "http-backend"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self._cgi_env(path, query, user),
        )
        assert process.stdin is not None and process.stdout is not None
        feeder = threading.Thread(target=self._feed, args=(process.stdin,), daemon=True)
        feeder.start()
        status = self._relay(process.stdout)
        feeder.join()
        process.wait()
        return status

    def _relay(self, stdout: IO[bytes]) -> int:
        """Turn the CGI answer (headers, blank line, body) into an HTTP response."""
        status, headers = 200, []
        for raw in iter(stdout.readline, b""):
            line = raw.decode("latin-1").rstrip("\r\n")
            if not line:
                break
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            else:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        # The body's length is unknown up front: the closed connection ends it.
        self.send_header("Connection", "close")
        self.end_headers()
        shutil.copyfileobj(stdout, self.wfile, COPY_CHUNK)
        self.close_connection = True
        return status


class GitHttpServer(Loopback):
    """A smart-HTTP git server on a random loopback port; stop it with `close()` or `with`."""

    def __init__(
        self,
        root: Path,
        tokens: set[str] | None = None,
        accepts: Callable[[str], bool] | None = None,
        reaches: Callable[[str, str], bool] | None = None,
    ) -> None:
        """Accept the passwords in `tokens` (a live set: add to it later), or those `accepts`;
        `reaches(password, path)` may narrow a password to some repositories."""
        self.root = root
        self.tokens = tokens if tokens is not None else set()
        self.accepts = accepts or self.tokens.__contains__
        self.reaches = reaches
        self._lock = threading.Lock()
        self._requests: list[GitRequest] = []
        super().__init__(_Handler)

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def requests(self) -> list[GitRequest]:
        with self._lock:
            return list(self._requests)

    def allows(self, password: str, path: str) -> bool:
        return self.accepts(password) and (self.reaches is None or self.reaches(password, path))

    def record(self, request: GitRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def url_for(self, full_name: str) -> str:
        """The clone URL of `owner/name`, without credentials."""
        return f"{self.base_url}/{full_name}.git"

    def bare_path(self, full_name: str) -> Path:
        return self.root / f"{full_name}.git"
