"""Condensation: which older steps to summarise, and how to ask for the summary. Pure.

The task message always stays; the most recent steps stay verbatim; the steps before them
(and any earlier summary) are replaced by one summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from resolver.agent.events import STEP_KINDS, Event, Kind, last_condensation
from resolver.agent.prompt import clip

KEEP_RECENT_STEPS: Final = 4
ACTION_CHARS: Final = 600
OBSERVATION_CHARS: Final = 1500
TRANSCRIPT_CHARS: Final = 60_000
FALLBACK_LINE_CHARS: Final = 200

SUMMARISER: Final = """\
You condense the history of a software agent working on a repository, so it can go on with
less context. Write a factual summary of at most 400 words: what the agent has done, which files
it read or changed and how, what it found out (errors, test results), and what it was about to
do next. Keep exact file paths, names and error messages. Do not invent anything."""


@dataclass(frozen=True)
class CondensePlan:
    """The steps to replace by a summary, and the summary they extend."""

    events: tuple[Event, ...]
    previous_summary: str | None
    steps: int

    @property
    def first_seq(self) -> int:
        return self.events[0].seq

    @property
    def up_to_seq(self) -> int:
        return self.events[-1].seq


def plan_condensation(events: Sequence[Event], keep_recent_steps: int) -> CondensePlan | None:
    """Everything older than the last `keep_recent_steps` steps, or None if nothing is."""
    previous = last_condensation(events)
    cutoff = int(previous.payload["up_to_seq"]) if previous else 0
    steps: dict[int, list[Event]] = {}
    for event in events:
        if event.seq > cutoff and event.kind in STEP_KINDS:
            steps.setdefault(int(event.payload["step"]), []).append(event)
    ordered = [steps[k] for k in sorted(steps)]
    old = ordered[: max(0, len(ordered) - keep_recent_steps)]
    if not old:
        return None
    summary = str(previous.payload["summary"]) if previous else None
    return CondensePlan(tuple(e for step in old for e in step), summary, len(old))


def transcript(plan: CondensePlan) -> str:
    """The condensed steps as text, each part clipped, the whole bounded."""
    lines = [_describe(e, ACTION_CHARS, OBSERVATION_CHARS) for e in plan.events]
    text = "\n".join(lines)
    if len(text) > TRANSCRIPT_CHARS:
        # The most recent part matters most to the next steps.
        text = "[... earlier steps cut ...]\n" + text[-TRANSCRIPT_CHARS:]
    return text


def summary_request(plan: CondensePlan) -> list[dict[str, Any]]:
    """The messages of the summarising LLM call."""
    earlier = f"Summary so far:\n{plan.previous_summary}\n\n" if plan.previous_summary else ""
    user = f"{earlier}Steps to add to the summary:\n{transcript(plan)}"
    return [{"role": "system", "content": SUMMARISER}, {"role": "user", "content": user}]


def fallback_summary(plan: CondensePlan) -> str:
    """A summary without an LLM: one line per step, used when the summarising call fails."""
    lines = [plan.previous_summary] if plan.previous_summary else []
    lines += [_describe(e, FALLBACK_LINE_CHARS, FALLBACK_LINE_CHARS) for e in plan.events]
    return clip("\n".join(lines), TRANSCRIPT_CHARS // 4)


def _describe(event: Event, action_chars: int, observation_chars: int) -> str:
    payload = event.payload
    if event.kind == Kind.ACTION:
        arguments = clip(str(payload["arguments"]), action_chars)
        return f"[step {payload['step']}] called {payload['tool']} {arguments}"
    if event.kind == Kind.OBSERVATION:
        failed = " (error)" if payload.get("error") else ""
        return f"  result{failed}: {clip(str(payload['content']), observation_chars)}"
    return f"[step {payload['step']}] said: {clip(str(payload['content']), action_chars)}"
