"""Security fixtures: the host-side targets an escaped payload would reach, and the stand-ins."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.conftest import agent_env, job_id, llm_server, sandbox_image, source_repo
from tests.e2e.slack_flow import slack_api
from tests.integrations.github.conftest import app_key, git_server, github_api, key_file
from tests.security.vectors import Targets

__all__ = [
    "agent_env",
    "app_key",
    "git_server",
    "github_api",
    "job_id",
    "key_file",
    "llm_server",
    "sandbox_image",
    "slack_api",
    "source_repo",
]

SECRET_LINE = "RESOLVER_SECRET_KEYS=host-only-secret-do-not-publish-4f1c"


@dataclass
class Listener:
    """An HTTP server on 127.0.0.1 that records every request that reaches it."""

    url: str
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


@pytest.fixture
def listener() -> Iterator[Listener]:
    caught: list[tuple[str, str, dict[str, str]]] = []

    class Record(BaseHTTPRequestHandler):
        def _any(self) -> None:
            caught.append((self.command, self.path, dict(self.headers.items())))
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_CONNECT = do_PUT = _any

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Listener(f"http://127.0.0.1:{server.server_address[1]}", caught)
    server.shutdown()
    server.server_close()


def make_targets(
    tmp_path: Path, listener: Listener, other_repo: str, other_objects: Path
) -> Targets:
    marks = tmp_path / "marks"
    marks.mkdir()
    host_dir = tmp_path / "worker-home"
    host_dir.mkdir()
    secret = host_dir / ".env"
    secret.write_text(SECRET_LINE + "\n")
    return Targets(marks, listener.url, other_repo, other_objects, host_dir, secret)
