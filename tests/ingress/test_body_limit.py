"""A body over the limit gets a 413 the sender can read, on a real server and socket."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from tests.integrations.deliveries import github, load

SIX_MIB = 6 * 1024 * 1024
# More than loopback's socket buffers hold, so the body is still on its way when the server
# answers (as it is over any real network).
TWENTY_MIB = 20 * 1024 * 1024


def send_raw(url: str, headers: dict[str, str], body: bytes) -> bytes:
    """Send the whole request the way a webhook sender does (headers, then the body in
    chunks), then read what comes back. A reset connection raises."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as conn:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        conn.sendall(f"POST {parts.path} HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode())
        for start in range(0, len(body), 64 * 1024):
            conn.sendall(body[start : start + 64 * 1024])
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer:
                break
        return answer


@pytest.mark.parametrize("size", [SIX_MIB, TWENTY_MIB])
def test_a_large_delivery_reads_413_not_a_reset(server: str, size: int) -> None:
    payload = load("github", "issue_comment.created__on_issue")
    payload["comment"]["body"] = "@resolver " + "x" * size
    delivery = github("issue_comment.created", payload)
    headers = {**delivery.headers, "Content-Length": str(len(delivery.body))}
    answer = send_raw(f"{server}{delivery.path}", headers, delivery.body)
    assert answer.startswith(b"HTTP/1.1 413")


def test_a_chunked_body_over_the_limit_reads_413(server: str) -> None:
    body = b"x" * TWENTY_MIB
    chunked = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + 65536]), body[i : i + 65536])
        for i in range(0, len(body), 65536)
    )
    headers = {"Transfer-Encoding": "chunked", "X-GitHub-Event": "ping"}
    answer = send_raw(f"{server}/webhooks/github", headers, chunked + b"0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413")
