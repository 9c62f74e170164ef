"""Stuck detection: each rule fires on its pattern and not before."""

from __future__ import annotations

from resolver.agent.stuck import detect_stuck, turns_of
from tests.agent.factories import Log


def stuck(log: Log) -> str | None:
    return detect_stuck(turns_of(log.events))


def test_same_action_and_observation_four_times() -> None:
    log = Log()
    for _ in range(3):
        log.bash("ls", "a b")
    assert stuck(log) is None
    log.bash("ls", "a b")
    assert stuck(log) == "stuck: same action and observation 4 times"


def test_same_action_with_changing_output_is_not_stuck() -> None:
    log = Log()
    for n in range(6):
        log.bash("date", f"t{n}")
    assert stuck(log) is None


def test_argument_order_does_not_hide_a_repeat() -> None:
    log = Log()
    log.call("str_replace_editor", '{"command": "view", "path": "a"}')
    log.call("str_replace_editor", '{"path": "a", "command": "view"}')
    log.call("str_replace_editor", '{"command":"view","path":"a"}')
    log.call("str_replace_editor", {"command": "view", "path": "a"})
    assert stuck(log) == "stuck: same action and observation 4 times"


def test_same_action_failing_three_times() -> None:
    log = Log()
    log.bash("make", "error 1", error=True)
    log.bash("make", "error 2", error=True)
    assert stuck(log) is None
    log.bash("make", "error 3", error=True)
    assert stuck(log) == "stuck: same action failed 3 times"


def test_different_failing_actions_are_not_stuck() -> None:
    log = Log()
    for command in ("make a", "make b", "make c"):
        log.bash(command, "error", error=True)
    assert stuck(log) is None


def test_alternating_pattern_over_six_steps() -> None:
    log = Log()
    for _ in range(2):
        log.bash("cat a", "A")
        log.bash("cat b", "B")
    log.bash("cat a", "A")
    assert stuck(log) is None
    log.bash("cat b", "B")
    assert stuck(log) == "stuck: alternating between two actions for 6 steps"


def test_same_message_three_times() -> None:
    log = Log()
    log.say("I will now fix it.")
    log.say("I will now fix it.")
    assert stuck(log) is None
    log.say("I will now fix it.")
    assert stuck(log) == "stuck: same message 3 times"


def test_messages_separated_by_actions_are_not_a_monologue() -> None:
    log = Log()
    for n in range(3):
        log.say("Working on it.")
        log.bash(f"step {n}")
    assert stuck(log) is None


def test_an_action_without_observation_is_ignored() -> None:
    log = Log()
    for _ in range(3):
        log.bash("ls", "x")
    log.add("action", step=9, call_id="open", tool="execute_bash", arguments='{"command":"ls"}')
    assert stuck(log) is None
