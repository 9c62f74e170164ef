"""Which model a job uses: parsed from the request, picked from the operator's list. Pure."""

from __future__ import annotations

import pytest

from resolver.core.model_choice import (
    ModelNotAllowedError,
    allowed_models,
    choose_model,
    parse_model_option,
)

ALLOWED = allowed_models("openai/default", "anthropic/claude-x, openai/mini ,openai/default")


def test_the_allowed_list_is_the_default_then_the_operators_others() -> None:
    assert ALLOWED == ("openai/default", "anthropic/claude-x", "openai/mini")
    assert allowed_models("openai/default", None) == ("openai/default",)


@pytest.mark.parametrize(
    ("text", "rest", "model"),
    [
        ("fix add() model=openai/mini please", "fix add() please", "openai/mini"),
        ("model=`anthropic/claude-x` fix it", "fix it", "anthropic/claude-x"),
        ("clear model= in the form", "clear model= in the form", None),
        ("fix the remodel=x thing", "fix the remodel=x thing", None),
        ("nothing here", "nothing here", None),
    ],
)
def test_model_is_parsed_out_of_the_request(text: str, rest: str, model: str | None) -> None:
    assert parse_model_option(text) == (rest, model)


def test_the_request_wins_over_the_repository_and_both_over_the_default() -> None:
    assert choose_model(None, None, "openai/default", ALLOWED) == "openai/default"
    assert choose_model(None, "openai/mini", "openai/default", ALLOWED) == "openai/mini"
    chosen = choose_model("anthropic/claude-x", "openai/mini", "openai/default", ALLOWED)
    assert chosen == "anthropic/claude-x"


def test_a_model_outside_the_list_is_refused_with_the_list() -> None:
    with pytest.raises(ModelNotAllowedError) as refused:
        choose_model("openai/gpt-huge", None, "openai/default", ALLOWED)
    message = str(refused.value)
    assert "`openai/gpt-huge` (from the request)" in message
    assert "`openai/default`, `anthropic/claude-x`, `openai/mini`" in message
    with pytest.raises(ModelNotAllowedError, match=r"config\.yml"):
        choose_model(None, "openai/gpt-huge", "openai/default", ALLOWED)


def test_a_repository_model_that_is_no_name_is_refused_without_echoing_it() -> None:
    for bad in (["a"], "@everyone <img src=x>"):
        with pytest.raises(ModelNotAllowedError) as refused:
            choose_model(None, bad, "openai/default", ALLOWED)
        assert "everyone" not in str(refused.value)
