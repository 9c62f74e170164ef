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


# --- Older outputs: the latest steps' outputs stay whole; older ones keep a head and a tail.
# The cut is decided once per output (by its age in steps), so the prefix of the conversation
# stays byte-identical from one step to the next except where an output just aged: providers
# that cache prompt prefixes keep hitting.

KEEP_FULL_OUTPUT_STEPS: Final = 3
OLD_OUTPUT_HEAD_CHARS: Final = 200
OLD_OUTPUT_TAIL_CHARS: Final = 300
OLD_ERROR_CHARS: Final = 2000  # a failed command's output is kept longer: errors matter later


def mask_old_outputs(
    events: Sequence[Event], keep_full_steps: int = KEEP_FULL_OUTPUT_STEPS
) -> list[Event]:
    """The events with the outputs of all but the last `keep_full_steps` steps cut short."""
    steps = sorted({int(e.payload["step"]) for e in events if e.kind == Kind.OBSERVATION})
    recent = set(steps[-keep_full_steps:]) if keep_full_steps > 0 else set()
    return [
        _masked(e) if e.kind == Kind.OBSERVATION and int(e.payload["step"]) not in recent else e
        for e in events
    ]


def head_and_tail(text: str, head: int, tail: int) -> str:
    """`text` itself when it fits, else its first `head` and last `tail` characters."""
    if len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    marker = f"\n[... {cut} characters of this older output cut; run it again to see them ...]\n"
    return text[:head] + marker + text[len(text) - tail :]


def _masked(event: Event) -> Event:
    content = str(event.payload["content"])
    if event.payload.get("error"):
        tail = OLD_ERROR_CHARS - OLD_OUTPUT_HEAD_CHARS
        short = head_and_tail(content, OLD_OUTPUT_HEAD_CHARS, tail)
    else:
        short = head_and_tail(content, OLD_OUTPUT_HEAD_CHARS, OLD_OUTPUT_TAIL_CHARS)
    if short == content:
        return event
    return Event(event.seq, event.kind, {**event.payload, "content": short})
