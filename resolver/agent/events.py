"""The trajectory's event kinds, and the agent's state derived from its event log. Pure.

The controller never keeps state beside the log: the conversation sent to the LLM, the
step count, tokens and cost are all folded from the (already redacted) events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final


class Kind(StrEnum):
    TASK = "task"  # system prompt and first user message
    SETUP = "setup"  # the repository's .resolver/setup.sh: exit_code, duration, output
    ACTION = "action"  # one tool call: step, call_id, tool, arguments, [thought, usage]
    OBSERVATION = "observation"  # a tool's result: step, call_id, tool, content, error
    MESSAGE = "message"  # an assistant reply without a tool call: step, content, usage
    LLM_RETRY = "llm_retry"  # attempt, error, delay_seconds
    CONDENSATION = "condensation"  # up_to_seq, steps, summary, reason, [usage]
    FINISH = "finish"  # outcome, summary
    STOP = "stop"  # reason, message
    DIFF = "diff"  # the change as the host took it: diff, truncated (after the sandbox ended)
    EGRESS = "egress"  # the proxy's record: setup, agent (what each allowed), hosts, refused
    INSTRUCTIONS = "instructions"  # the repository's instruction files used: files [{path, …}]
    VERIFICATION = "verification"  # the checks the trajectory shows: checks, not_run
    MCP = "mcp"  # the repository's MCP servers: servers [{server, remote, tools | error}]
    STEER = "steer"  # a message sent to the running job: content (fenced), author, from_job


# Shown after an assistant turn without a tool call, so the model knows how to go on.
NUDGE: Final = (
    "Continue with the task using the tools. When you are done, call `finish` with the "
    "outcome and a summary."
)
NOT_EXECUTED: Final = "(not executed)"


@dataclass(frozen=True)
class Event:
    seq: int
    kind: str
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class Totals:
    """What the run has spent so far. `cost_usd` is None once any call had no known price."""

    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def totals(events: Iterable[Event]) -> Totals:
    steps = prompt = completion = 0
    cost: float | None = 0.0
    for event in events:
        steps = max(steps, int(event.payload.get("step", 0)))
        usage = event.payload.get("usage")
        if not usage:
            continue
        prompt += int(usage["prompt_tokens"])
        completion += int(usage["completion_tokens"])
        call_cost = usage.get("cost_usd")
        cost = None if cost is None or call_cost is None else cost + float(call_cost)
    return Totals(steps, prompt, completion, cost)


def last_condensation(events: Sequence[Event]) -> Event | None:
    for event in reversed(events):
        if event.kind == Kind.CONDENSATION:
            return event
    return None


def build_messages(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The conversation for the next LLM call: system, task, summary, then the recent steps."""
    task = next(e for e in events if e.kind == Kind.TASK)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": task.payload["system"]},
        {"role": "user", "content": task.payload["message"]},
    ]
    condensed = last_condensation(events)
    cutoff = 0
    if condensed is not None:
        cutoff = int(condensed.payload["up_to_seq"])
        messages.append({"role": "user", "content": summary_message(condensed.payload["summary"])})
    # Steering messages are never condensed away: the older ones follow the summary.
    messages.extend(_steer_message(e) for e in events if e.seq <= cutoff and e.kind == Kind.STEER)
    recent = [e for e in events if e.seq > cutoff and e.kind in STEP_KINDS | {Kind.STEER}]
    messages.extend(step_messages(recent))
    return messages


def _steer_message(event: Event) -> dict[str, Any]:
    return {"role": "user", "content": event.payload["content"]}


STEP_KINDS: Final = frozenset({Kind.ACTION, Kind.OBSERVATION, Kind.MESSAGE})


def summary_message(summary: str) -> str:
    return f"Summary of the earlier steps of this task (older history was condensed):\n{summary}"


def step_messages(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Group each step's tool calls into one assistant message, followed by their results."""
    messages: list[dict[str, Any]] = []
    steps: list[Event] = []
    for event in [*events, None]:
        # A steering message arrives between steps: it follows the steps before it.
        if event is None or event.kind == Kind.STEER:
            for step in _group_by_step(steps):
                messages.extend(_messages_of_step(step))
            steps = []
            if event is not None:
                messages.append(_steer_message(event))
        else:
            steps.append(event)
    return messages


def _group_by_step(events: Sequence[Event]) -> list[list[Event]]:
    groups: dict[int, list[Event]] = {}
    for event in events:
        groups.setdefault(int(event.payload["step"]), []).append(event)
    return [groups[step] for step in sorted(groups)]


def _messages_of_step(step: list[Event]) -> list[dict[str, Any]]:
    if step[0].kind == Kind.MESSAGE:
        content = step[0].payload["content"]
        return [{"role": "assistant", "content": content}, {"role": "user", "content": NUDGE}]
    actions = [e for e in step if e.kind == Kind.ACTION]
    results = {e.payload["call_id"]: e.payload["content"] for e in step if e.kind != Kind.ACTION}
    assistant = {
        "role": "assistant",
        "content": actions[0].payload.get("thought") or None,
        "tool_calls": [_tool_call(a) for a in actions],
    }
    replies = [
        {
            "role": "tool",
            "tool_call_id": a.payload["call_id"],
            "content": results.get(a.payload["call_id"], NOT_EXECUTED),
        }
        for a in actions
    ]
    return [assistant, *replies]


def _tool_call(action: Event) -> dict[str, Any]:
    return {
        "id": action.payload["call_id"],
        "type": "function",
        "function": {"name": action.payload["tool"], "arguments": action.payload["arguments"]},
    }


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """A provider-independent estimate: about four characters per token."""
    return len(json.dumps(messages, ensure_ascii=False)) // 4
