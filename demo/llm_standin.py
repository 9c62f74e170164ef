"""[stand-in] A scripted, OpenAI-compatible chat completions server for the demo.

It is not a model: it replays a fixed plan of tool calls for the demo repository, so the demo
runs offline and costs nothing. Set RESOLVER_LLM_MODEL to use a real model instead.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FIXED_LINE = "    return a + b\n"

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("think", {"thought": "Read the code and its test, reproduce the failure, then fix it."}),
    ("execute_bash", {"command": "ls && python3 -m unittest -q 2>&1 | tail -n 3"}),
    ("str_replace_editor", {"command": "view", "path": "calc.py"}),
    (
        "str_replace_editor",
        {
            "command": "str_replace",
            "path": "calc.py",
            "old_str": "    return a - b\n",
            "new_str": FIXED_LINE,
        },
    ),
    ("execute_bash", {"command": "python3 -m unittest -q 2>&1 | tail -n 3"}),
    (
        "finish",
        {
            "outcome": "changed_code",
            "summary": "`add` subtracted its arguments; it now adds them. The unit tests pass.",
        },
    ),
]


def _reply(step: int) -> dict[str, Any]:
    name, args = PLAN[min(step, len(PLAN) - 1)]
    call = {
        "id": f"call_{step}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {
        "id": f"chatcmpl-demo-{step}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "demo-standin",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        ],
        "usage": {
            "prompt_tokens": 900 + 150 * step,
            "completion_tokens": 60,
            "total_tokens": 960 + 150 * step,
        },
    }


class StandinLLM:
    """Serves the plan on 127.0.0.1; each request gets the next step."""

    def __init__(self) -> None:
        self.step = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                body = json.dumps(_reply(standin.step)).encode()
                standin.step += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StandinLLM:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
