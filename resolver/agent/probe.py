"""The preflight's question to the model: does the configured key and model answer a
one-token completion? It goes through litellm as a job's calls do, without retries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import litellm
import openai

from resolver.agent.llm import LLMConfig, shared_client
from resolver.core.logs import redact
from resolver.core.redact import Redactor

PROBE_TIMEOUT: Final = 15.0
Verdict = Literal["ok", "refused", "unknown_model", "unreachable", "failed"]


@dataclass(frozen=True)
class Probe:
    verdict: Verdict
    provider: str
    detail: str  # redacted, one line


def probe(config: LLMConfig, timeout: float = PROBE_TIMEOUT) -> Probe:
    """One completion of at most one token; never raises."""
    try:
        provider = litellm.get_llm_provider(config.model, api_base=config.base_url)[1]
    except openai.OpenAIError as error:
        return Probe("unknown_model", "", _line(error, config))
    extra = {"client": client} if (client := shared_client(config)) is not None else {}
    try:
        litellm.completion(
            model=config.model,
            messages=[{"role": "user", "content": "Say OK."}],
            api_key=config.api_key,
            base_url=config.base_url,
            max_tokens=1,
            timeout=timeout,
            num_retries=0,
            max_retries=0,
            **extra,
        )
    except openai.OpenAIError as error:
        return Probe(_verdict(error), provider, _line(error, config))
    return Probe("ok", provider, "")


def _verdict(error: openai.OpenAIError) -> Verdict:
    if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
        return "refused"
    if isinstance(error, openai.NotFoundError):
        return "unknown_model"
    if isinstance(error, openai.APITimeoutError | openai.APIConnectionError):
        return "unreachable"
    # litellm reports a refused connection to an OpenAI-compatible server as a 500.
    if isinstance(error, openai.InternalServerError) and "connection error" in str(error).lower():
        return "unreachable"
    return "failed"


def _line(error: Exception, config: LLMConfig) -> str:
    # The key is masked here too: the settings a check is given need not be the process's.
    text = Redactor([config.api_key or ""])(redact(str(error)))
    return " ".join(text.split())[:200]
