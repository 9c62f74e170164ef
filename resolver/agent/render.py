"""A readable, plain-text trajectory for the terminal (`resolver run`). Pure."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from resolver.agent.events import Event, Kind

MAX_OUTPUT_LINES: Final = 15
MAX_LINE_CHARS: Final = 200


def render_trajectory(events: Iterable[Event]) -> str:
    return "\n".join(line for event in events for line in render_event(event))


def render_event(event: Event) -> list[str]:
    renderer = _RENDERERS.get(event.kind)
    if renderer is None:
        return [f"#{event.seq} {event.kind}"]
    head, *rest = renderer(event.payload)
    return [f"#{event.seq} {head}", *rest]


def _task(p: Mapping[str, Any]) -> list[str]:
    return [f"task ({p.get('model', '?')}): {_short(str(p.get('instruction', '')))}"]


def _action(p: Mapping[str, Any]) -> list[str]:
    lines = [f"  thought: {_short(p['thought'])}"] if p.get("thought") else []
    return [f"[step {p['step']}] {describe_call(p['tool'], p['arguments'])}", *lines]


def _observation(p: Mapping[str, Any]) -> list[str]:
    marker = "error" if p.get("error") else "result"
    return [f"  {marker}:", *indent(str(p["content"]))]


def _message(p: Mapping[str, Any]) -> list[str]:
    return [f"[step {p['step']}] said: {_short(str(p['content']))}"]


def _retry(p: Mapping[str, Any]) -> list[str]:
    return [f"LLM retry {p['attempt']} in {p['delay_seconds']} s: {_short(str(p['error']))}"]


def _condensation(p: Mapping[str, Any]) -> list[str]:
    head = f"condensed {p['steps']} step(s), events #{p['first_seq']}-#{p['up_to_seq']}"
    return [f"{head} ({p['reason']}, {p['method']} summary)"]


def _finish(p: Mapping[str, Any]) -> list[str]:
    return [f"finish: {p['outcome']}", *indent(str(p["summary"]), max_lines=40)]


def _setup(p: Mapping[str, Any]) -> list[str]:
    head = f"setup: .resolver/setup.sh exited with {p['exit_code']} in {p['duration']} s"
    tail = "\n".join(str(p["output"]).splitlines()[-5:])
    return [head, *indent(tail)]


def _egress(p: Mapping[str, Any]) -> list[str]:
    head = f"egress: setup {p['setup']}; agent {p['agent']}"
    hosts = [
        f"  {host}: {c['allowed']} allowed, {c['blocked']} blocked"
        + (f" ({_short(c['commands'][0])})" if c["commands"] else "")
        for host, c in p["hosts"].items()
    ]
    return [head, *hosts, *(f"  {line}" for line in p.get("refused", []))]


def _stop(p: Mapping[str, Any]) -> list[str]:
    return [f"stopped ({p['reason']}): {p['message']}"]


def _instructions(p: Mapping[str, Any]) -> list[str]:
    names = ", ".join(str(f.get("path")) for f in p.get("files") or ()) or "none"
    return [f"instruction files: {names}"]


def _verification(p: Mapping[str, Any]) -> list[str]:
    lines = [f"  {c.get('command')} · exit {c.get('exit_code')}" for c in p.get("checks") or ()]
    missing = ", ".join(str(kind) for kind in p.get("not_run") or ())
    return ["verification" + (f" (not run: {missing})" if missing else ""), *lines]


def _mcp(p: Mapping[str, Any]) -> list[str]:
    lines = [
        f"  {s.get('server')}: {', '.join(s.get('tools') or ()) or s.get('error') or 'no tools'}"
        for s in p.get("servers") or ()
    ]
    return ["MCP servers", *lines]


_RENDERERS: Final[dict[str, Callable[[Mapping[str, Any]], list[str]]]] = {
    Kind.TASK: _task,
    Kind.SETUP: _setup,
    Kind.ACTION: _action,
    Kind.OBSERVATION: _observation,
    Kind.MESSAGE: _message,
    Kind.LLM_RETRY: _retry,
    Kind.CONDENSATION: _condensation,
    Kind.FINISH: _finish,
    Kind.STOP: _stop,
    Kind.EGRESS: _egress,
    Kind.INSTRUCTIONS: _instructions,
    Kind.VERIFICATION: _verification,
    Kind.MCP: _mcp,
}


def describe_call(tool: str, arguments: str) -> str:
    """`$ command` for bash, `edit <command> <path>` for the editor, else the raw call."""
    try:
        args = json.loads(arguments)
    except ValueError:
        return f"{tool} (malformed arguments) {_short(arguments)}"
    if not isinstance(args, dict):
        return f"{tool} {_short(arguments)}"
    if tool == "execute_bash":
        return f"$ {_short(str(args.get('command', '')))}"
    if tool == "str_replace_editor":
        return f"edit {args.get('command')} {args.get('path')}"
    if tool == "think":
        return f"think: {_short(str(args.get('thought', '')))}"
    if tool == "finish":
        return f"finish ({args.get('outcome')})"
    return f"{tool} {_short(arguments)}"


def indent(text: str, max_lines: int = MAX_OUTPUT_LINES) -> list[str]:
    lines = text.splitlines() or [""]
    shown = [f"    {_short(line)}" for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"    [... {len(lines) - max_lines} more lines]")
    return shown


def _short(text: str) -> str:
    flat = text.replace("\n", " ⏎ ")
    return flat if len(flat) <= MAX_LINE_CHARS else flat[: MAX_LINE_CHARS - 1] + "…"
