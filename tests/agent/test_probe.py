"""The preflight's one-token question to the model (agent/probe.py), against the scripted LLM
server: each answer becomes the verdict the doctor shows, in one line with no key in it, and
the probe itself never raises."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from resolver.agent.llm import LLMConfig
from resolver.agent.probe import probe
from tests.support.llm_server import MODEL, ScriptedLLMServer, error, text
from tests.support.ports import free_port

KEY = "sk-probe-test-key-0123456789"


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    started = ScriptedLLMServer([], api_key=KEY).start()
    yield started
    started.stop()


def config(server: ScriptedLLMServer, key: str = KEY) -> LLMConfig:
    return LLMConfig(MODEL, api_key=key, base_url=server.base_url)


def test_a_model_that_answers_is_ok_with_its_provider(server: ScriptedLLMServer) -> None:
    server.push(text("OK", prompt_tokens=3, completion_tokens=1))
    found = probe(config(server))
    assert (found.verdict, found.provider, found.detail) == ("ok", "openai", "")
    [request] = server.requests
    assert request["max_tokens"] == 1


def test_an_answer_quoting_the_key_never_shows_it(server: ScriptedLLMServer) -> None:
    """A gateway's key has no shape a pattern knows, and the check's settings may be ones the
    process never read (the key is masked whether or not the logs were told it)."""
    key = "corpgw-\t" + secrets.token_hex(12)
    server.api_key = key
    server.push(error(400, f"key {key} is not allowed to use this model"))
    found = probe(config(server, key))
    assert found.detail.endswith("key ****** is not allowed to use this model")


def test_a_wrong_key_is_refused_and_the_key_is_not_shown(server: ScriptedLLMServer) -> None:
    wrong = "sk-wrong-key-abcdefghijklmnop"
    found = probe(config(server, wrong))
    assert found.verdict == "refused"
    assert wrong not in found.detail and "\n" not in found.detail
    assert len(found.detail) <= 200


def test_a_model_the_provider_does_not_know_is_named_unknown(server: ScriptedLLMServer) -> None:
    server.push(error(404, "The model `scripted-model` does not exist", "model_not_found"))
    assert probe(config(server)).verdict == "unknown_model"


def test_a_server_that_is_not_there_is_unreachable() -> None:
    port = free_port()  # reserved for this test: nothing listens on it
    found = probe(LLMConfig(MODEL, api_key=KEY, base_url=f"http://127.0.0.1:{port}/v1"), 5)
    assert found.verdict == "unreachable"


def test_any_other_failure_is_failed_with_one_line_of_why(server: ScriptedLLMServer) -> None:
    server.push(error(400, "max_tokens is too large:\n 1 > 0"))
    found = probe(config(server))
    assert found.verdict == "failed"
    assert "max_tokens is too large" in found.detail and "\n" not in found.detail
    assert len(server.requests) == 1  # no retries
