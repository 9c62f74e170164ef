"""The LLM edge: the only module that imports litellm.

It calls `litellm.completion` with native tool calling, retries rate limits and outages with
bounded backoff, translates provider errors into this module's exceptions, and reads tokens
and cost from the response. For the OpenAI provider it hands litellm one shared client that
sends the history as it is (see `shared_client`).
"""

from __future__ import annotations

import json
import os
import random
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Final

# Without this, importing litellm fetches a price list over the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
import openai
from litellm.llms.openai.common_utils import BaseOpenAILLM, get_openai_credentials
from openai.resources.chat import Chat, Completions

from resolver.agent.caching import Prices, cache_marked, cached_tokens_of

if TYPE_CHECKING:
    from resolver.core.settings import Settings

litellm.suppress_debug_info = True


def _build_response_models() -> None:
    # pydantic builds litellm's response models on first use and warns, from inside the call,
    # that a TypedDict uses `ReadOnly`; build them here, where that warning can be dropped.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*ReadOnly.*", category=UserWarning)
        litellm.ModelResponse()


_build_response_models()

_OVERFLOW_HINTS: Final = ("context length", "context window", "maximum context", "too many tokens")


class LLMError(Exception):
    """The LLM call failed; the subclass says whether it is worth retrying."""


class LLMConfigError(LLMError):
    """No model is configured."""


class RateLimitedError(LLMError):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LLMUnavailableError(LLMError):
    """A timeout, a connection failure or a 5xx: transient."""


class ContextWindowExceededError(LLMError):
    """The conversation no longer fits the model's context window."""


class LLMRequestError(LLMError):
    """The provider refused the request (auth, bad request, unknown model): permanent."""


class LLMCancelledError(LLMError):
    """The job was cancelled while waiting to retry."""


TRANSIENT: Final = (RateLimitedError, LLMUnavailableError)


@dataclass(frozen=True)
class LLMConfig:
    model: str
    api_key: str | None = None
    base_url: str | None = None
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    timeout: float = 180.0
    max_retries: int = 5
    retry_min_seconds: float = 1.0
    retry_max_seconds: float = 60.0
    # Price of an input token read from the provider's prompt cache; None: the input price.
    cached_input_cost_per_token: float | None = None

    def __repr__(self) -> str:
        return f"LLMConfig(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def priced(self) -> bool:
        return self.input_cost_per_token is not None and self.output_cost_per_token is not None


def llm_config_from(settings: Settings) -> LLMConfig:
    if not settings.llm_model:
        raise LLMConfigError("RESOLVER_LLM_MODEL is not set")
    return LLMConfig(
        model=settings.llm_model,
        api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
        base_url=settings.llm_base_url,
        input_cost_per_token=settings.llm_input_cost_per_token,
        output_cost_per_token=settings.llm_output_cost_per_token,
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        cached_input_cost_per_token=settings.llm_cached_input_cost_per_token,
    )


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    """One call's tokens. `prompt_tokens` includes the cached ones (read and written)."""

    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    cached_tokens: int = 0  # input tokens read from the provider's prompt cache
    cache_write_tokens: int = 0  # input tokens written to it (Anthropic's cache creation)

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class Reply:
    content: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage


@dataclass(frozen=True)
class Retry:
    """A failed attempt that will be retried after `delay_seconds`."""

    attempt: int
    error: str
    delay_seconds: float


Messages = Sequence[Mapping[str, Any]]


def complete(
    config: LLMConfig,
    messages: Messages,
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    on_retry: Callable[[Retry], None],
    wait: Callable[[float], bool],
    timeout: float | None = None,
) -> Reply:
    """One completion, retried on transient errors; `wait(s)` returns True if cancelled."""
    attempt = 0
    while True:
        try:
            return _call_once(config, messages, tools, timeout or config.timeout)
        except TRANSIENT as error:
            if attempt >= config.max_retries:
                raise
            delay = backoff_seconds(attempt, error, config)
            attempt += 1
            on_retry(Retry(attempt, f"{type(error).__name__}: {error}", delay))
            if wait(delay):
                raise LLMCancelledError("cancelled while waiting to retry") from error


def backoff_seconds(attempt: int, error: LLMError, config: LLMConfig) -> float:
    """The provider's Retry-After when it gave one, else exponential backoff with jitter."""
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        return float(min(max(retry_after, 0.0), config.retry_max_seconds))
    base = config.retry_min_seconds * (2.0**attempt)
    return float(min(base * random.uniform(0.5, 1.5), config.retry_max_seconds))


def _call_once(
    config: LLMConfig, messages: Messages, tools: Sequence[Mapping[str, Any]] | None, timeout: float
) -> Reply:
    if accepts_cache_markers(config):
        messages, tools = cache_marked(messages, tools)
    extra: dict[str, Any] = {"tools": list(tools), "tool_choice": "auto"} if tools else {}
    client = shared_client(config)
    if client is not None:
        extra["client"] = client
    try:
        response = litellm.completion(
            model=config.model,
            messages=list(messages),
            api_key=config.api_key,
            base_url=config.base_url,
            timeout=timeout,
            # Retries are ours, so each one is recorded and cancellable.
            num_retries=0,
            max_retries=0,
            **extra,
        )
    except openai.OpenAIError as error:
        raise translate_error(error) from error
    return parse_response(response, config)


class _VerbatimCompletions(Completions):
    """Chat completions that send the messages and tools as they are.

    The SDK copies every request through its TypedDicts to apply field aliases and formats,
    which chat messages and tools do not have; for a long history that copy costs more than
    the rest of the call. As `extra_body` they reach the wire unchanged, the same bytes.
    """

    def create(self, **params: Any) -> Any:
        verbatim = {key: params.pop(key) for key in ("messages", "tools") if key in params}
        extra_body = {**(params.pop("extra_body", None) or {}), **verbatim}
        return super().create(messages=[], extra_body=extra_body, **params)


class _VerbatimChat(Chat):
    @cached_property
    def completions(self) -> Completions:
        return _VerbatimCompletions(self._client)


class _VerbatimOpenAI(openai.OpenAI):
    @cached_property
    def chat(self) -> Chat:
        return _VerbatimChat(self)


@lru_cache(maxsize=4)
def shared_client(config: LLMConfig) -> openai.OpenAI | None:
    """The OpenAI client passed to litellm for the OpenAI provider with a configured key.

    Kept across calls, so connections are reused; litellm keys its own cached client on the
    timeout, which changes with the time left, so it would build one per call near the end.
    None for other providers and for keys from the environment: litellm's usual path.
    """
    try:
        provider = litellm.get_llm_provider(config.model, api_base=config.base_url)[1]
    except openai.OpenAIError:
        return None  # litellm.completion raises the same error, translated there
    if provider != "openai" or not config.api_key:
        return None
    credentials = get_openai_credentials(api_base=config.base_url, api_key=config.api_key)
    return _VerbatimOpenAI(
        api_key=config.api_key,
        base_url=credentials.api_base,
        max_retries=0,
        # Built as litellm builds its own, so its SSL and HTTP/2 settings still apply.
        http_client=BaseOpenAILLM._get_sync_http_client(),
    )


def translate_error(error: openai.OpenAIError) -> LLMError:
    """Map litellm's (OpenAI-shaped) exceptions onto ours, once, here."""
    message = str(error)
    if isinstance(error, litellm.ContextWindowExceededError):
        return ContextWindowExceededError(message)
    if isinstance(error, litellm.RateLimitError):
        return RateLimitedError(message, _retry_after(error))
    if isinstance(error, openai.APITimeoutError | openai.APIConnectionError):
        return LLMUnavailableError(message)
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and (status >= 500 or status in (408, 409)):
        return LLMUnavailableError(message)
    if isinstance(error, litellm.BadRequestError) and _mentions_overflow(message):
        return ContextWindowExceededError(message)
    return LLMRequestError(message)


def _mentions_overflow(message: str) -> bool:
    lowered = message.lower()
    return any(hint in lowered for hint in _OVERFLOW_HINTS)


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None) or getattr(error, "litellm_response_headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the backoff applies instead


def parse_response(response: Any, config: LLMConfig) -> Reply:
    message = response.choices[0].message
    calls = tuple(
        ToolCall(
            id=call.id or f"call_{index}",
            name=call.function.name or "",
            arguments=_arguments_text(call.function.arguments),
        )
        for index, call in enumerate(message.tool_calls or ())
    )
    return Reply(message.content or "", calls, usage_of(response, config))


def _arguments_text(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments)


def usage_of(response: Any, config: LLMConfig) -> Usage:
    """Tokens from the response; cost from litellm's prices, else the configured ones."""
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    cached, written = cached_tokens_of(usage)
    cost = _litellm_cost(response)
    if cost is None:
        cost = configured_cost(config, prompt, completion, cached)
    return Usage(prompt, completion, cost, cached, written)


def configured_cost(config: LLMConfig, prompt: int, completion: int, cached: int) -> float | None:
    """The cost at the configured prices, cached input tokens at their own price; None unpriced."""
    if not config.priced:
        return None
    prices = Prices(
        input=config.input_cost_per_token or 0.0,
        output=config.output_cost_per_token or 0.0,
        cached_input=config.cached_input_cost_per_token,
    )
    return prices.cost(prompt, completion, cached)


# Providers whose API takes Anthropic's `cache_control` markers (Claude on Bedrock and Vertex
# too). OpenAI and OpenAI-compatible servers cache prefixes by themselves and may refuse
# unknown fields, so they never get one.
_MARKER_PROVIDERS: Final = frozenset({"anthropic"})
_CLAUDE_HOSTS: Final = frozenset({"bedrock", "vertex_ai"})


def accepts_cache_markers(config: LLMConfig) -> bool:
    try:
        provider = litellm.get_llm_provider(config.model, api_base=config.base_url)[1]
    except openai.OpenAIError:
        return False  # litellm.completion raises the same error, translated there
    if provider in _MARKER_PROVIDERS:
        return True
    return provider in _CLAUDE_HOSTS and "claude" in config.model.lower()


def _litellm_cost(response: Any) -> float | None:
    try:
        return float(litellm.completion_cost(completion_response=response))
    # litellm raises several unrelated types for a model it has no price for; an unknown
    # price is a normal state (only the token budget applies), not an error.
    except Exception:
        return None
