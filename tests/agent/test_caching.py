"""Prompt caching: cached tokens read from the provider's usage, their price, and the markers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from resolver.agent.caching import Prices, cache_marked
from resolver.agent.llm import LLMConfig, accepts_cache_markers, complete
from resolver.agent.tools import TOOLS
from tests.support.llm_server import MODEL, ScriptedLLMServer, scripted_llm, text, tool

INPUT, CACHED, OUTPUT = 3e-6, 3e-7, 15e-6


def priced(server: ScriptedLLMServer, cached_price: float | None = CACHED) -> LLMConfig:
    return LLMConfig(
        model=MODEL,
        api_key="k-test",
        base_url=server.base_url,
        input_cost_per_token=INPUT,
        output_cost_per_token=OUTPUT,
        cached_input_cost_per_token=cached_price,
        timeout=10,
        max_retries=0,
    )


def ask(config: LLMConfig, messages: list[dict[str, str]]) -> object:
    return complete(config, messages, TOOLS, on_retry=lambda _r: None, wait=lambda _s: False)


def conversation(turns: int) -> list[dict[str, str]]:
    """A long system prompt and task, then `turns` more user messages."""
    system = {"role": "system", "content": "You are an agent. " * 400}
    task = {"role": "user", "content": "Fix the failing test. " * 200}
    return [system, task, *({"role": "user", "content": f"turn {n}"} for n in range(turns))]


def test_cost_of_cached_tokens_is_computed_from_configured_prices() -> None:
    with scripted_llm(measure_usage=True) as server:
        server.push(tool("think", thought="a"), tool("think", thought="b"))
        config = priced(server)
        first = ask(config, conversation(1)).usage  # type: ignore[attr-defined]
        second = ask(config, conversation(2)).usage  # type: ignore[attr-defined]

    assert first.cached_tokens == 0  # nothing sent before: nothing cached
    assert first.cost_usd == pytest.approx(first.prompt_tokens * INPUT + 20 * OUTPUT)
    # The second request repeats the first one's tools, system prompt and task: a cached prefix.
    assert 1024 <= second.cached_tokens < second.prompt_tokens
    uncached = second.prompt_tokens - second.cached_tokens
    expected = uncached * INPUT + second.cached_tokens * CACHED + 20 * OUTPUT
    assert second.cost_usd == pytest.approx(expected)
    assert second.as_dict()["cached_tokens"] == second.cached_tokens


def test_cached_tokens_cost_the_input_price_when_no_cached_price_is_set() -> None:
    with scripted_llm(measure_usage=True) as server:
        server.push(text("a"), text("b"))
        config = priced(server, cached_price=None)
        ask(config, conversation(1))
        usage = ask(config, conversation(2)).usage  # type: ignore[attr-defined]
    assert usage.cached_tokens > 0
    assert usage.cost_usd == pytest.approx(usage.prompt_tokens * INPUT + 20 * OUTPUT)


def test_prices_charge_each_kind_of_token_its_own_price() -> None:
    prices = Prices(input=2.0, output=5.0, cached_input=0.5)
    assert prices.cost(prompt=100, completion=10, cached=60) == 40 * 2.0 + 60 * 0.5 + 10 * 5.0
    # A provider's count of cached tokens never exceeds its count of input tokens.
    assert prices.cost(prompt=10, completion=0, cached=50) == 10 * 0.5
    assert Prices(input=2.0, output=5.0).cost(100, 0, 60) == 200.0


def test_openai_compatible_calls_carry_no_cache_markers(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(text("ok"))
    ask(priced(llm_server), conversation(1))
    assert "cache_control" not in json.dumps(llm_server.requests[0])


@pytest.mark.parametrize(
    ("model", "accepts"),
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", True),
        ("vertex_ai/claude-3-5-sonnet@20240620", True),
        ("openai/gpt-4o", False),
        (MODEL, False),
        ("bedrock/amazon.titan-text-express-v1", False),
        ("deepseek/deepseek-chat", False),
    ],
)
def test_only_providers_that_take_cache_control_get_markers(model: str, accepts: bool) -> None:
    config = replace(LLMConfig(model="x"), model=model)
    assert accepts_cache_markers(config) is accepts


def test_markers_sit_on_the_stable_prefix_only() -> None:
    messages = conversation(2)
    marked, tools = cache_marked(messages, TOOLS)

    def marker(message: object) -> object:
        content = message["content"]  # type: ignore[index]
        return content[0].get("cache_control") if isinstance(content, list) else None

    assert [marker(m) for m in marked] == [{"type": "ephemeral"}, {"type": "ephemeral"}, None, None]
    assert marked[0]["content"][0]["text"] == messages[0]["content"]
    assert tools is not None
    assert tools[-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in tools[:-1])
    # The caller's messages and the shared tool list are left as they were.
    assert all(isinstance(m["content"], str) for m in messages)
    assert all("cache_control" not in t for t in TOOLS)


def test_a_lone_message_is_not_marked() -> None:
    """A one-off request (a summary) pays no cache write for a prefix nobody will reuse."""
    summary = [{"role": "system", "content": "condense"}, {"role": "user", "content": "steps"}]
    marked, tools = cache_marked(summary, None)
    assert marked[1] == summary[1]
    assert tools is None


def test_anthropic_gets_markers_on_the_wire_and_its_cache_reads_are_counted() -> None:
    from tests.support.anthropic_server import MODEL as CLAUDE
    from tests.support.anthropic_server import AnthropicServer

    with AnthropicServer(input_tokens=300, cache_read=2000, cache_write=100) as server:
        config = LLMConfig(model=CLAUDE, api_key="k-test", base_url=server.base_url, timeout=10)
        usage = ask(config, conversation(2)).usage  # type: ignore[attr-defined]
    [request] = server.requests
    assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert request["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    first_user = request["messages"][0]["content"]
    assert any(block.get("cache_control") for block in first_user)
    assert "cache_control" not in json.dumps(request["messages"][1:])
    assert (usage.cached_tokens, usage.cache_write_tokens) == (2000, 100)
    assert usage.prompt_tokens >= 2000 + 300
