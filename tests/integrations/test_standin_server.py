"""The stand-ins' HTTP server takes as many clients at once as a host runs jobs."""

from __future__ import annotations

import contextlib
import socket
from http.server import BaseHTTPRequestHandler

from integrations.standin.server import ManyClientsServer

AT_ONCE = 64


def test_a_stand_in_queues_many_connections_before_it_accepts_them() -> None:
    """Nothing accepts here, as when the server's one accepting thread falls behind: every
    connection still completes at once. With socketserver's backlog of 5, the seventh waited out
    TCP's one-second SYN retransmission (bench/load.py's 👀, a second late)."""
    server = ManyClientsServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    with contextlib.ExitStack() as clients:
        try:
            for _ in range(AT_ONCE):
                clients.enter_context(socket.create_connection(("127.0.0.1", port), timeout=0.5))
        finally:
            server.server_close()
