"""The job page's trajectory, one block per stored event: commands with their output, edits as
diffs, the model's messages, retries, stops. Built from the redacted record only. Pure."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol, TypeVar

from resolver.core.logs import redact
from resolver.core.states import JobState, Outcome

# Output longer than this many lines starts collapsed.
FOLD_LINES: Final = 12
# Stored events no viewer sees, on the page or through the API: `task` is the prompt as the
# model got it, the system prompt included.
HIDDEN_EVENTS: Final = frozenset({"task"})


class Event(Protocol):
    @property
    def kind(self) -> str: ...


E = TypeVar("E", bound=Event)


def shown_events(events: Iterable[E]) -> list[E]:
    """What a viewer may see of a job's events: the one decision, for the page, its live
    stream and `/api/jobs/{id}`."""
    return [event for event in events if event.kind not in HIDDEN_EVENTS]


@dataclass(frozen=True)
class Block:
    """One entry of the trajectory as the page shows it."""

    seq: int
    kind: str
    title: str
    step: int | None = None
    code: str = ""
    """A command, shown as typed."""
    text: str = ""
    """Prose or output."""
    diff: list[tuple[str, str]] = field(default_factory=list)
    """(css class, line) pairs."""
    failed: bool = False
    at: datetime | None = None

    @property
    def folded(self) -> bool:
        return self.text.count("\n") >= FOLD_LINES


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(str(raw))
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def diff_lines(text: str) -> list[tuple[str, str]]:
    """A unified diff's lines, each with the class that colours it."""
    lines = []
    for line in text.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ")):
            lines.append(("meta", line))
        elif line.startswith("@@"):
            lines.append(("hunk", line))
        elif line.startswith("+"):
            lines.append(("add", line))
        elif line.startswith("-"):
            lines.append(("del", line))
        else:
            lines.append(("ctx", line))
    return lines


def edit_diff(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An editor call as a diff of what it replaced or wrote."""
    path = str(args.get("path") or "")
    command = args.get("command")
    if command == "str_replace":
        old, new = str(args.get("old_str") or ""), str(args.get("new_str") or "")
    elif command in ("create", "insert"):
        old, new = "", str(args.get("file_text") or args.get("new_str") or "")
    else:
        return []
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm=""
    )
    return diff_lines("\n".join(lines))


def _action(seq: int, payload: Mapping[str, Any], at: datetime | None) -> Block:
    tool, step = str(payload.get("tool") or "?"), payload.get("step")
    args = _arguments(payload.get("arguments"))
    thought = str(payload.get("thought") or "")
    if tool == "execute_bash":
        return Block(
            seq,
            "command",
            f"Step {step}",
            step,
            code=str(args.get("command", "")),
            text=thought,
            at=at,
        )
    if tool == "str_replace_editor":
        verb = str(args.get("command") or "edit")
        title = f"Step {step} · {verb} {args.get('path', '')}"
        return Block(seq, "edit", title, step, text=thought, diff=edit_diff(args), at=at)
    if tool == "think":
        return Block(
            seq, "think", f"Step {step} · thinking", step, text=str(args.get("thought", "")), at=at
        )
    if tool == "finish":
        return Block(seq, "finish-call", f"Step {step} · finish", step, text=thought, at=at)
    return Block(seq, "command", f"Step {step} · {tool}", step, text=json.dumps(args), at=at)


def _observation(seq: int, payload: Mapping[str, Any], at: datetime | None) -> Block | None:
    if payload.get("tool") in ("think", "finish") and not payload.get("error"):
        return None
    return Block(
        seq,
        "output",
        "output",
        payload.get("step"),
        text=str(payload.get("content")),
        failed=bool(payload.get("error")),
        at=at,
    )


def block_of(seq: int, kind: str, payload: Mapping[str, Any], at: datetime | None) -> Block | None:
    """The block for one shown event (`shown_events`); None for a step the page folds into
    the one before it."""
    if kind == "action":
        return _action(seq, payload, at)
    if kind == "observation":
        return _observation(seq, payload, at)
    if kind == "message":
        return Block(
            seq,
            "message",
            f"Step {payload.get('step')} · said",
            payload.get("step"),
            text=str(payload.get("content") or ""),
            at=at,
        )
    if kind == "setup":
        failed = payload.get("exit_code") not in (0, None)
        title = f"Setup script · exit {payload.get('exit_code')} · {payload.get('duration')}s"
        return Block(
            seq, "setup", title, text=str(payload.get("output") or ""), failed=failed, at=at
        )
    if kind == "llm_retry":
        title = f"LLM call retried (attempt {payload.get('attempt')})"
        return Block(seq, "note", title, text=str(payload.get("error") or ""), at=at)
    if kind == "condensation":
        return Block(
            seq, "note", "Earlier steps condensed", text=str(payload.get("summary") or ""), at=at
        )
    if kind == "finish":
        return Block(
            seq,
            "finish",
            f"Finished: {payload.get('outcome')}",
            text=str(payload.get("summary") or ""),
            at=at,
        )
    if kind == "stop":
        return Block(
            seq,
            "stop",
            f"Stopped: {payload.get('reason')}",
            text=str(payload.get("message") or ""),
            failed=True,
            at=at,
        )
    if kind == "diff":
        return Block(
            seq, "final-diff", "The change", diff=diff_lines(str(payload.get("diff"))), at=at
        )
    if kind in ("instructions", "verification"):
        return _proof(seq, kind, payload, at)
    if kind == "egress":
        return _egress(seq, payload, at)
    return Block(seq, "note", kind, text=redact(json.dumps(dict(payload))), at=at)


def _proof(seq: int, kind: str, payload: Mapping[str, Any], at: datetime | None) -> Block:
    """Which instruction files the agent was given, and which checks it ran."""
    if kind == "instructions":
        files = [str(f.get("path")) for f in payload.get("files") or ()]
        text = ", ".join(files) if files else "none in the default branch"
        return Block(seq, "note", "Instruction files used", text=text, at=at)
    lines = [
        f"{c.get('command')} · {c.get('kind')} · exit {c.get('exit_code')} · {c.get('runs')} run(s)"
        for c in payload.get("checks") or ()
    ]
    missing = ", ".join(str(kind) for kind in payload.get("not_run") or ())
    if missing:
        lines.append(f"not run: {missing}")
    return Block(seq, "note", "Verification", text="\n".join(lines), at=at)


def _egress(seq: int, payload: Mapping[str, Any], at: datetime | None) -> Block:
    """What the sandbox could reach: the policy of each phase, then each host the proxy saw,
    blocked ones first, with the commands that met the block."""
    lines = [
        f"setup could reach: {payload.get('setup')}",
        f"agent could reach: {payload.get('agent')}",
    ]
    lines += [f"refused for this repository: {why}" for why in payload.get("refused") or ()]
    found = payload.get("hosts")
    hosts = found if isinstance(found, Mapping) else {}
    ordered = sorted(hosts.items(), key=lambda item: (-_count(item[1], "blocked"), item[0]))
    blocked = 0
    for host, counted in ordered:
        refused, passed = _count(counted, "blocked"), _count(counted, "allowed")
        blocked += refused
        line = f"{host}: {passed} allowed, {refused} blocked"
        commands = counted.get("commands") if isinstance(counted, Mapping) else None
        if refused and commands:
            line += " · during " + "; ".join(str(c) for c in commands[:3])
        lines.append(line)
    if not hosts:
        lines.append("no request went out")
    title = f"Network · {blocked} request(s) blocked" if blocked else "Network"
    return Block(seq, "note", title, text="\n".join(lines), failed=bool(blocked), at=at)


def _count(counted: object, key: str) -> int:
    value = counted.get(key) if isinstance(counted, Mapping) else None
    return value if isinstance(value, int) else 0


# What a failed job's outcome means, for someone who is not the operator.
PLAIN_ERRORS: Final = {
    Outcome.COULD_NOT: "The agent could not finish the task. Its own words:",
    Outcome.REFUSED: "The job was not started:",
    Outcome.EXPIRED: "The job waited too long in the queue and was dropped.",
    Outcome.ERROR: "Something went wrong while running the job:",
    Outcome.CANCELLED: "Someone stopped the job.",
}


def plain_error(state: str, outcome: str | None) -> str:
    if state not in (JobState.FAILED, JobState.CANCELLED):
        return ""
    return PLAIN_ERRORS.get(Outcome(outcome), "") if outcome in set(Outcome) else ""


def duration(started: datetime | None, finished: datetime | None, now: datetime) -> str:
    if started is None:
        return ""
    seconds = max(0, int(((finished or now) - started).total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s"


def money(cost: float | None) -> str:
    return "n/a" if cost is None else f"${cost:.2f}"
