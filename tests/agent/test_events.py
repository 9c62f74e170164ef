"""The state folded from the event log: the LLM conversation, totals, condensation."""

from __future__ import annotations

import pytest

from resolver.agent.condense import fallback_summary, plan_condensation, summary_request
from resolver.agent.events import NOT_EXECUTED, NUDGE, Kind, build_messages, totals
from resolver.agent.limits import limit_reached, stop_message
from resolver.agent.task import AgentLimits, InvalidLimitError, limits_from
from resolver.core.settings import Settings
from tests.agent.factories import Log

KEY = "x" * 43 + "="
LIMITS = AgentLimits(max_iterations=3, max_cost_usd=0.05, max_tokens=500, wall_clock_seconds=60)


def test_messages_start_with_system_and_task() -> None:
    log = Log(system="be careful", message="add a test")
    assert build_messages(log.events) == [
        {"role": "system", "content": "be careful"},
        {"role": "user", "content": "add a test"},
    ]


def test_tool_calls_of_one_step_share_an_assistant_message() -> None:
    log = Log()
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "cost_usd": 0.0}
    log.add(
        Kind.ACTION, step=1, call_id="a", tool="think", arguments="{}", thought="hm", usage=usage
    )
    log.add(Kind.OBSERVATION, step=1, call_id="a", tool="think", content="noted")
    log.add(Kind.ACTION, step=1, call_id="b", tool="finish", arguments="{}")
    messages = build_messages(log.events)[2:]
    assert messages[0]["role"] == "assistant" and messages[0]["content"] == "hm"
    assert [c["id"] for c in messages[0]["tool_calls"]] == ["a", "b"]
    assert messages[1] == {"role": "tool", "tool_call_id": "a", "content": "noted"}
    assert messages[2] == {"role": "tool", "tool_call_id": "b", "content": NOT_EXECUTED}


def test_a_text_reply_is_followed_by_a_nudge() -> None:
    log = Log()
    log.say("Let me think.")
    assert build_messages(log.events)[2:] == [
        {"role": "assistant", "content": "Let me think."},
        {"role": "user", "content": NUDGE},
    ]


def test_totals_sum_usage_and_lose_the_cost_once_unknown() -> None:
    log = Log()
    log.bash("a")
    log.bash("b")
    spent = totals(log.events)
    assert (spent.steps, spent.prompt_tokens, spent.completion_tokens) == (2, 200, 20)
    assert spent.cost_usd == pytest.approx(0.02)
    log.call("think", {"thought": "x"}, cost=None)
    assert totals(log.events).cost_usd is None


def test_condensation_keeps_the_task_and_the_recent_steps() -> None:
    log = Log()
    for n in range(6):
        log.bash(f"cmd {n}", f"out {n}")
    plan = plan_condensation(log.events, keep_recent_steps=2)
    assert plan is not None and plan.steps == 4
    log.add(
        Kind.CONDENSATION, up_to_seq=plan.up_to_seq, summary="did 0-3", steps=4, reason="threshold"
    )
    messages = build_messages(log.events)
    assert messages[1]["content"] == "do it"
    assert "did 0-3" in messages[2]["content"]
    commands = [m["tool_calls"][0]["function"]["arguments"] for m in messages if "tool_calls" in m]
    assert commands == ['{"command": "cmd 4"}', '{"command": "cmd 5"}']


def test_a_second_condensation_extends_the_first_summary() -> None:
    log = Log()
    for n in range(3):
        log.bash(f"cmd {n}")
    first = plan_condensation(log.events, 1)
    assert first is not None
    log.add(Kind.CONDENSATION, up_to_seq=first.up_to_seq, summary="EARLIER", steps=2)
    assert plan_condensation(log.events, 1) is None
    log.bash("cmd 3")
    second = plan_condensation(log.events, 1)
    assert second is not None and second.steps == 1 and second.previous_summary == "EARLIER"
    assert "EARLIER" in summary_request(second)[1]["content"]
    assert fallback_summary(second).startswith("EARLIER\n[step 3] called execute_bash")


@pytest.mark.parametrize(
    ("steps", "cost", "elapsed", "cancelled", "expected"),
    [
        (0, 0.01, 0, False, None),
        (0, 0.01, 0, True, "cancelled"),
        (3, 0.01, 0, False, "max_iterations"),
        (1, 0.05, 0, False, "max_cost"),
        (1, 0.01, 61, False, "wall_clock"),
    ],
)
def test_limits(steps: int, cost: float, elapsed: float, cancelled: bool, expected: str) -> None:
    log = Log()
    for _ in range(steps):
        log.call("think", {}, cost=cost / max(steps, 1))
    spent = totals(log.events)
    assert limit_reached(spent, LIMITS, elapsed, cancelled) == expected


def test_token_budget_applies_when_the_price_is_unknown() -> None:
    limits = AgentLimits(max_iterations=99, max_cost_usd=0.05, max_tokens=500, wall_clock_seconds=9)
    log = Log()
    for _ in range(2):
        log.call("think", {}, cost=None)
    spent = totals(log.events)
    assert spent.tokens == 220
    assert limit_reached(spent, limits, 0, False) is None
    for _ in range(3):
        log.call("think", {}, cost=None)
    spent = totals(log.events)
    assert limit_reached(spent, limits, 0, False) == "max_tokens"
    assert "550 of its 500 token budget" in stop_message("max_tokens", limits, spent)


def test_repository_config_lowers_limits_but_never_raises_them() -> None:
    settings = Settings(
        _env_file=None, secret_keys=KEY, llm_max_iterations=50, llm_max_cost_usd=4.0
    )
    limits = limits_from(settings, {"max_iterations": 10, "max_cost_usd": 9.5})
    assert (limits.max_iterations, limits.max_cost_usd) == (10, 4.0)
    assert limits_from(settings, {}).wall_clock_seconds == settings.llm_wall_clock_seconds


@pytest.mark.parametrize("value", ["ten", -1, 0, 2.5, True])
def test_bad_repository_limits_are_refused(value: object) -> None:
    settings = Settings(_env_file=None, secret_keys=KEY)
    with pytest.raises(InvalidLimitError, match="max_iterations"):
        limits_from(settings, {"max_iterations": value})
