"""Loop detection over the trajectory. Pure.

The rules follow the seed architecture's StuckDetector: repeated action and observation,
a repeatedly failing action, an A-B-A-B cycle, and a monologue of identical messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from resolver.agent.events import Event, Kind

SAME_PAIR_LIMIT: Final = 4
SAME_ERROR_LIMIT: Final = 3
CYCLE_LENGTH: Final = 6
SAME_MESSAGE_LIMIT: Final = 3


@dataclass(frozen=True)
class Turn:
    """One thing the agent did and what came back; a text-only reply has no observation."""

    action: str
    observation: str
    error: bool
    is_message: bool = False


def turns_of(events: Sequence[Event]) -> list[Turn]:
    """Pair each action with its observation, in order; messages are turns of their own."""
    results = {e.payload["call_id"]: e for e in events if e.kind == Kind.OBSERVATION}
    turns: list[Turn] = []
    for event in events:
        if event.kind == Kind.MESSAGE:
            turns.append(Turn(str(event.payload["content"]), "", False, is_message=True))
        elif event.kind == Kind.ACTION and event.payload["call_id"] in results:
            result = results[event.payload["call_id"]].payload
            key = action_key(event.payload["tool"], event.payload["arguments"])
            turns.append(Turn(key, str(result["content"]), bool(result.get("error"))))
    return turns


def action_key(tool: str, arguments: str) -> str:
    """Two calls are the same action when their tool and parsed arguments are equal."""
    try:
        canonical = json.dumps(json.loads(arguments), sort_keys=True)
    except ValueError:
        canonical = arguments
    return f"{tool} {canonical}"


def detect_stuck(turns: Sequence[Turn]) -> str | None:
    """The reason the agent is looping, or None."""
    for rule in (_same_pair, _same_error, _cycle, _same_message):
        reason = rule(turns)
        if reason:
            return reason
    return None


def _same_pair(turns: Sequence[Turn]) -> str | None:
    last = turns[-SAME_PAIR_LIMIT:]
    if len(last) == SAME_PAIR_LIMIT and not last[0].is_message and _all_equal(last):
        return f"stuck: same action and observation {SAME_PAIR_LIMIT} times"
    return None


def _same_error(turns: Sequence[Turn]) -> str | None:
    last = turns[-SAME_ERROR_LIMIT:]
    if len(last) < SAME_ERROR_LIMIT or not all(t.error for t in last):
        return None
    if len({t.action for t in last}) == 1:
        return f"stuck: same action failed {SAME_ERROR_LIMIT} times"
    return None


def _cycle(turns: Sequence[Turn]) -> str | None:
    last = turns[-CYCLE_LENGTH:]
    if len(last) < CYCLE_LENGTH or any(t.is_message for t in last):
        return None
    evens, odds = last[0::2], last[1::2]
    if _all_equal(evens) and _all_equal(odds) and evens[0] != odds[0]:
        return f"stuck: alternating between two actions for {CYCLE_LENGTH} steps"
    return None


def _same_message(turns: Sequence[Turn]) -> str | None:
    last = turns[-SAME_MESSAGE_LIMIT:]
    if len(last) == SAME_MESSAGE_LIMIT and all(t.is_message for t in last) and _all_equal(last):
        return f"stuck: same message {SAME_MESSAGE_LIMIT} times"
    return None


def _all_equal(turns: Sequence[Turn]) -> bool:
    return all(t == turns[0] for t in turns[1:])
