"""A scripted OpenAI-compatible chat server on loopback, reached through litellm.

Use model `openai/scripted-model` with `base_url=server.base_url`. Each request is answered by
the script: a queue of `Reply` values, or a function of the request that returns one. With
`api_key`, a request without that bearer key gets OpenAI's 401 instead, as from the real API.
With `measure_usage`, a reply's usage is measured from the request instead (`measured_usage`):
its prompt tokens, and as `prompt_tokens_details.cached_tokens` the prefix it shares with the
previous request, counted as OpenAI's automatic prompt caching counts it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from integrations.standin.server import ManyClientsServer

MODEL = "openai/scripted-model"
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a JSON body with an HTTP status and headers."""

    body: dict[str, Any]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


@dataclass(frozen=True)
class Call:
    """A tool call for `tool_calls`: the tool's name and its arguments (a dict, or raw text)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _completion(message: dict[str, Any], finish_reason: str, usage: dict[str, int]) -> Reply:
    return Reply(
        {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "scripted-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage,
        }
    )


def tool_calls(
    *calls: Call, content: str | None = None, prompt_tokens: int = 100, completion_tokens: int = 20
) -> Reply:
    """An assistant turn that calls one or more tools."""
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": f"call_{uuid.uuid4().hex[:10]}",
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.arguments
                    if isinstance(c.arguments, str)
                    else json.dumps(c.arguments),
                },
            }
            for c in calls
        ],
    }
    return _completion(message, "tool_calls", _usage(prompt_tokens, completion_tokens))


def tool(name: str, **arguments: Any) -> Reply:
    """Shorthand for a turn with a single tool call."""
    return tool_calls(Call(name, arguments))


def finish(outcome: str, summary: str) -> Reply:
    return tool("finish", outcome=outcome, summary=summary)


def text(content: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> Reply:
    """An assistant turn with text and no tool call."""
    message = {"role": "assistant", "content": content}
    return _completion(message, "stop", _usage(prompt_tokens, completion_tokens))


def error(
    status: int, message: str, code: str | None = None, retry_after: int | None = None
) -> Reply:
    """An OpenAI-style error body, e.g. 429 with Retry-After, or 400 context_length_exceeded."""
    kind = "invalid_request_error" if status == 400 else "api_error"
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
    return Reply(body, status=status, headers=headers)


def rate_limited(retry_after: int = 0) -> Reply:
    return error(429, "Rate limit reached for requests", "rate_limit_exceeded", retry_after)


def context_overflow() -> Reply:
    return error(
        400,
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 9000 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
    )


Script = Callable[[dict[str, Any]], Reply]

CHARS_PER_TOKEN = 4
# OpenAI caches prompts of at least 1024 tokens, in steps of 128, on an exact prefix match.
CACHE_MIN_TOKENS = 1024
CACHE_STEP_TOKENS = 128


def prompt_text(request: dict[str, Any]) -> str:
    """The request's prompt in the order the provider caches it: tools, then the messages."""
    return json.dumps([request.get("tools") or [], request.get("messages") or []])


def count_tokens(text: str) -> int:
    """A provider-independent count: about four characters per token."""
    return len(text) // CHARS_PER_TOKEN


def cached_prefix_tokens(prompt: str, previous: str) -> int:
    """The tokens of `prompt` a prefix cache holds after `previous` was sent."""
    shared, longest = 0, min(len(prompt), len(previous))
    while shared < longest:  # a binary search for the longest common prefix
        middle = (shared + longest + 1) // 2
        if prompt[:middle] == previous[:middle]:
            shared = middle
        else:
            longest = middle - 1
    tokens = count_tokens(prompt[:shared])
    if tokens < CACHE_MIN_TOKENS:
        return 0
    return tokens - tokens % CACHE_STEP_TOKENS


def measured_usage(prompt: str, previous: str, scripted: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's usage object for `prompt`, with the cached tokens in `prompt_tokens_details`."""
    prompt_tokens = count_tokens(prompt)
    completion_tokens = int(scripted.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_prefix_tokens(prompt, previous)},
    }


class ScriptedLLMServer:
    """The server; `requests` holds every request body received, in order."""

    def __init__(
        self,
        script: Iterable[Reply] | Script,
        api_key: str | None = None,
        measure_usage: bool = False,
    ) -> None:
        self.api_key = api_key
        self.measure_usage = measure_usage
        self._previous_prompt = ""
        self.requests: list[dict[str, Any]] = []
        self.server_seconds = 0.0
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._script: Script = self._next_in_queue
        self.set_script(script)
        # 48 jobs may ask at once (bench/load.py): a listen backlog of its own size.
        self._httpd = ManyClientsServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def set_script(self, script: Iterable[Reply] | Script) -> None:
        if callable(script):
            self._script = script
        else:
            self._queue = deque(script)
            self._script = self._next_in_queue

    def push(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    def _next_in_queue(self, _request: dict[str, Any]) -> Reply:
        if not self._queue:
            return error(500, "the test script has no more replies")
        return self._queue.popleft()

    def answer(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            reply = self._script(request)
            if not self.measure_usage or "usage" not in reply.body:
                return reply
            prompt = prompt_text(request)
            usage = measured_usage(prompt, self._previous_prompt, reply.body["usage"])
            self._previous_prompt = prompt
            return Reply({**reply.body, "usage": usage}, reply.status, reply.headers, reply.delay)

    def key_accepted(self, authorization: str) -> bool:
        return self.api_key is None or authorization == f"Bearer {self.api_key}"

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _wrong_key(authorization: str) -> Reply:
    """OpenAI's answer to a wrong key: 401, the key shown masked but for its ends."""
    key = authorization.removeprefix("Bearer ")
    shown = f"{key[:3]}{'*' * max(len(key) - 7, 0)}{key[-4:]}" if len(key) > 8 else "***"
    message = f"Incorrect API key provided: {shown}. You can find your API key in your account."
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None}}
    body["error"]["code"] = "invalid_api_key"
    return Reply(body, status=401)


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; without this, Nagle's algorithm and the
            # client's delayed ACK add ~40 ms to every reply.
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            started = time.perf_counter()
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self.path.split("?")[0] not in CHAT_PATHS:
                self._send(Reply({"error": {"message": "not found"}}, status=404))
                return
            if not server.key_accepted(self.headers.get("Authorization", "")):
                self._send(_wrong_key(self.headers.get("Authorization", "")))
                return
            reply = server.answer(json.loads(raw or b"{}"))
            if reply.delay:
                time.sleep(reply.delay)
            server.server_seconds += time.perf_counter() - started
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def scripted_llm(
    script: Iterable[Reply] | Script = (), api_key: str | None = None, measure_usage: bool = False
) -> Iterator[ScriptedLLMServer]:
    """Start a server for the duration of a `with` block."""
    server = ScriptedLLMServer(script, api_key, measure_usage).start()
    try:
        yield server
    finally:
        server.stop()
