"""A scripted Anthropic Messages API server on loopback, reached through litellm.

Use model `anthropic/claude-sonnet-4-5` with `base_url=server.base_url`. It answers every
`POST /v1/messages` with a text reply whose usage reports `cache_read_input_tokens` as
Anthropic's does, and keeps each request body in `requests`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from integrations.standin.server import ManyClientsServer

MODEL = "anthropic/claude-sonnet-4-5"


class AnthropicServer:
    def __init__(self, input_tokens: int, cache_read: int, cache_write: int = 0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.usage = {
            "input_tokens": input_tokens,
            "output_tokens": 7,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        }
        self._httpd = ManyClientsServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(self) -> dict[str, Any]:
        return {
            "id": "msg_01scripted",
            "type": "message",
            "role": "assistant",
            "model": MODEL.removeprefix("anthropic/"),
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": self.usage,
        }

    def __enter__(self) -> AnthropicServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler_for(server: AnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path.split("?")[0] != "/v1/messages":
                self._send(404, {"type": "error", "error": {"type": "not_found_error"}})
                return
            server.requests.append(json.loads(raw or b"{}"))
            self._send(200, server.reply())

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
