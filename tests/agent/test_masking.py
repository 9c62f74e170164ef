"""Older outputs in the conversation: cut to a head and a tail, the latest steps kept whole."""

from __future__ import annotations

import json

from resolver.agent.condense import (
    KEEP_FULL_OUTPUT_STEPS,
    OLD_ERROR_CHARS,
    OLD_OUTPUT_HEAD_CHARS,
    OLD_OUTPUT_TAIL_CHARS,
    mask_old_outputs,
)
from resolver.agent.events import build_messages
from tests.agent.factories import Log


def output(step: int, size: int = 4000) -> str:
    """A command's output of `size` characters, with a recognisable head and tail."""
    body = f"line of step {step}\n" * (size // 16)
    return f"HEAD {step}\n{body}"[: size - 12] + f"\nTAIL {step} end"


def tool_contents(messages: list[dict[str, object]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def run(steps: int) -> Log:
    log = Log(message="the task " * 500)
    for step in range(1, steps + 1):
        log.bash(f"cat part{step}", output(step))
    return log


def test_the_latest_outputs_stay_whole_and_older_ones_keep_head_and_tail() -> None:
    log = run(6)
    contents = tool_contents(build_messages(mask_old_outputs(log.events)))
    whole = contents[-KEEP_FULL_OUTPUT_STEPS:]
    assert whole == [output(s) for s in range(7 - KEEP_FULL_OUTPUT_STEPS, 7)]
    for step, content in enumerate(contents[:-KEEP_FULL_OUTPUT_STEPS], start=1):
        assert content.startswith(f"HEAD {step}\n")
        assert content.endswith(f"TAIL {step} end")
        assert "characters of this older output cut" in content
        assert len(content) < OLD_OUTPUT_HEAD_CHARS + OLD_OUTPUT_TAIL_CHARS + 100


def test_the_task_and_short_outputs_are_never_cut() -> None:
    log = Log(message="the task " * 2000)
    for step in range(1, 8):
        log.bash(f"echo {step}", f"short {step}")
    messages = build_messages(mask_old_outputs(log.events))
    assert messages[1]["content"] == "the task " * 2000
    assert tool_contents(messages) == [f"short {s}" for s in range(1, 8)]


def test_an_older_error_keeps_more_of_its_output() -> None:
    log = Log()
    log.bash("pytest", output(1, 6000), error=True)
    log.bash("cat big", output(2, 6000))
    for step in range(3, 3 + KEEP_FULL_OUTPUT_STEPS):
        log.bash(f"echo {step}", "ok")
    failed, plain = tool_contents(build_messages(mask_old_outputs(log.events)))[:2]
    assert failed.endswith("TAIL 1 end") and plain.endswith("TAIL 2 end")
    assert OLD_ERROR_CHARS <= len(failed) < OLD_ERROR_CHARS + 100
    assert len(plain) < len(failed)


def test_the_trajectory_itself_keeps_every_output_whole() -> None:
    log = run(6)
    mask_old_outputs(log.events)
    contents = [e.payload["content"] for e in log.events if e.kind == "observation"]
    assert contents == [output(s) for s in range(1, 7)]


def test_one_more_step_changes_the_conversation_only_where_an_output_aged() -> None:
    """Providers cache prompt prefixes: all before the output that just aged is resent as it was."""
    log = run(8)
    before = json.dumps(build_messages(mask_old_outputs(log.events)))
    log.bash("cat part9", output(9))
    after = json.dumps(build_messages(mask_old_outputs(log.events)))
    aged = 8 - KEEP_FULL_OUTPUT_STEPS + 1  # the step whose output was whole and now is cut
    shared = before.index(f"HEAD {aged}")
    assert after[:shared] == before[:shared]
    assert after.index(f"line of step {aged}") > shared  # its head is still there
