"""Prompt caching: where to put cache markers, how many tokens came from the cache, and what
they cost. Pure; the LLM edge (llm.py) decides when each applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

EPHEMERAL: Final = {"type": "ephemeral"}


@dataclass(frozen=True)
class Prices:
    """USD per token; `cached_input` None means cached input tokens cost the input price."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, prompt: int, completion: int, cached: int) -> float:
        """`prompt` includes the `cached` tokens, which are charged at their own price."""
        cached = min(max(cached, 0), prompt)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (prompt - cached) * self.input + cached * cached_price + completion * self.output


def cached_tokens_of(usage: Any) -> tuple[int, int]:
    """Cache reads and writes: OpenAI's `prompt_tokens_details` (litellm maps Anthropic's
    `cache_read_input_tokens` and `cache_creation_input_tokens` onto it), else Anthropic's own."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = _count(getattr(details, "cached_tokens", None))
    written = _count(getattr(details, "cache_write_tokens", None))
    read = read or _count(getattr(usage, "cache_read_input_tokens", None))
    written = written or _count(getattr(usage, "cache_creation_input_tokens", None))
    return read, written


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cache_marked(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]] | None]:
    """Copies with `cache_control` on the stable prefix: the last tool (which caches all the
    tools), the system prompt, and the first user message when the conversation goes on."""
    marked = list(messages)
    for role in ("system", "user"):
        index = next((i for i, m in enumerate(marked) if m.get("role") == role), None)
        if index is None or not isinstance(marked[index].get("content"), str):
            continue
        if role == "system" or index < len(marked) - 1:
            marked[index] = _with_marker(marked[index])
    marked_tools = list(tools) if tools else None
    if marked_tools:
        marked_tools[-1] = {**marked_tools[-1], "cache_control": EPHEMERAL}
    return marked, marked_tools


def _with_marker(message: Mapping[str, Any]) -> dict[str, Any]:
    block = {"type": "text", "text": message["content"], "cache_control": EPHEMERAL}
    return {**message, "content": [block]}
