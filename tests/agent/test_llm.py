"""The LLM edge against the scripted OpenAI-compatible server, through litellm."""

from __future__ import annotations

import litellm
import pytest

from resolver.agent.llm import (
    ContextWindowExceededError,
    LLMCancelledError,
    LLMConfig,
    LLMRequestError,
    LLMUnavailableError,
    Retry,
    complete,
    shared_client,
)
from resolver.agent.tools import TOOLS
from tests.support.llm_server import (
    MODEL,
    Call,
    ScriptedLLMServer,
    context_overflow,
    error,
    rate_limited,
    text,
    tool_calls,
)

MESSAGES = [{"role": "user", "content": "hello"}]


def config(server: ScriptedLLMServer, priced: bool = True, retries: int = 2) -> LLMConfig:
    return LLMConfig(
        model=MODEL,
        api_key="k-test",
        base_url=server.base_url,
        input_cost_per_token=0.001 if priced else None,
        output_cost_per_token=0.002 if priced else None,
        timeout=10,
        max_retries=retries,
        retry_min_seconds=0.01,
    )


class Waits:
    def __init__(self, cancel: bool = False) -> None:
        self.delays: list[float] = []
        self.retries: list[Retry] = []
        self.cancel = cancel

    def wait(self, seconds: float) -> bool:
        self.delays.append(seconds)
        return self.cancel

    def call(self, server: ScriptedLLMServer, **kwargs: object) -> object:
        return complete(
            config(server, **kwargs),  # type: ignore[arg-type]
            MESSAGES,
            TOOLS,
            on_retry=self.retries.append,
            wait=self.wait,
        )


def test_tool_calls_tokens_and_configured_prices(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(tool_calls(Call("execute_bash", '{"command": "ls"'), content="looking"))
    reply = Waits().call(llm_server)
    assert reply.content == "looking"  # type: ignore[attr-defined]
    call = reply.tool_calls[0]  # type: ignore[attr-defined]
    assert (call.name, call.arguments) == ("execute_bash", '{"command": "ls"')
    usage = reply.usage  # type: ignore[attr-defined]
    assert (usage.prompt_tokens, usage.completion_tokens) == (100, 20)
    assert usage.cost_usd == pytest.approx(100 * 0.001 + 20 * 0.002)
    request = llm_server.requests[0]
    assert request["model"] == "scripted-model"
    assert [t["function"]["name"] for t in request["tools"]] == [
        "execute_bash",
        "str_replace_editor",
        "think",
        "finish",
    ]


def test_a_model_without_a_price_has_an_unknown_cost(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(text("hi"))
    reply = Waits().call(llm_server, priced=False)
    assert reply.usage.cost_usd is None  # type: ignore[attr-defined]


def test_rate_limit_is_retried_after_the_providers_delay(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(rate_limited(retry_after=7), text("done"))
    waits = Waits()
    reply = waits.call(llm_server)
    assert reply.content == "done"  # type: ignore[attr-defined]
    assert waits.delays == [7.0]
    assert waits.retries[0].attempt == 1 and "RateLimitedError" in waits.retries[0].error
    assert len(llm_server.requests) == 2


def test_outage_gives_up_after_the_bounded_retries(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(*[error(503, "overloaded")] * 3)
    waits = Waits()
    with pytest.raises(LLMUnavailableError):
        waits.call(llm_server, retries=2)
    assert len(llm_server.requests) == 3 and len(waits.retries) == 2
    assert all(0 < d <= 60 for d in waits.delays)


def test_context_overflow_is_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(context_overflow())
    with pytest.raises(ContextWindowExceededError):
        Waits().call(llm_server)
    assert len(llm_server.requests) == 1


def test_a_refused_request_is_permanent(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(error(401, "invalid api key", "invalid_api_key"))
    with pytest.raises(LLMRequestError):
        Waits().call(llm_server)
    assert len(llm_server.requests) == 1


def test_cancel_during_backoff(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(rate_limited(), text("never"))
    with pytest.raises(LLMCancelledError):
        Waits(cancel=True).call(llm_server)
    assert len(llm_server.requests) == 1


HISTORY = [
    {"role": "system", "content": "You fix bugs."},
    {"role": "user", "content": "Run the tests."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "execute_bash", "arguments": '{"command": "pytest"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "1 passed\n[exit code: 0]"},
]


def test_the_shared_client_sends_the_request_litellm_would(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(text("ours"), text("litellm's"))
    assert shared_client(config(llm_server)) is not None
    complete(config(llm_server), HISTORY, TOOLS, on_retry=lambda _r: None, wait=lambda _s: False)
    litellm.completion(
        model=MODEL,
        messages=HISTORY,
        api_key="k-test",
        base_url=llm_server.base_url,
        timeout=10,
        num_retries=0,
        max_retries=0,
        tools=list(TOOLS),
        tool_choice="auto",
    )
    ours, theirs = llm_server.requests
    assert ours == theirs
    assert list(ours) == list(theirs)
    assert ours["tools"] == list(TOOLS)


def test_other_providers_and_environment_keys_keep_litellms_client() -> None:
    assert shared_client(LLMConfig(model="anthropic/claude-sonnet-4-5", api_key="k")) is None
    assert shared_client(LLMConfig(model=MODEL, api_key=None)) is None
