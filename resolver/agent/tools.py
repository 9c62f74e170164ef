"""The agent's tools: their JSON schemas, and running one tool call in the sandbox.

A bad call (unknown tool, malformed or invalid arguments) becomes an error observation that
the model reads and can recover from; it never raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from resolver.agent.editor import EditArgs, EditError, FileEditor, Files
from resolver.agent.task import FINISH_OUTCOMES

if TYPE_CHECKING:
    from sandbox import ExecResult


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


EXECUTE_BASH: Final = _function(
    "execute_bash",
    "Run a bash command in the sandbox. The working directory and exported variables persist "
    "between calls; it starts in /workspace. Long output is cut in the middle. Avoid "
    "interactive commands; run long ones with a timeout.",
    {
        "command": {"type": "string", "description": "The command line to run."},
        "timeout": {"type": "integer", "description": "Seconds before the command is killed."},
    },
    ["command"],
)
EDITOR: Final = _function(
    "str_replace_editor",
    "View, create and edit files under /workspace. `view` shows a file with line numbers "
    "(optionally a view_range [start, end], end -1 for the last line) or lists a directory. "
    "`create` writes file_text to a new file or overwrites one. `str_replace` replaces old_str, "
    "which must occur exactly once, with new_str. `insert` inserts new_str after line "
    "insert_line (0 for the top). `undo_edit` reverts the last edit of the file.",
    {
        "command": {
            "type": "string",
            "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
        },
        "path": {"type": "string", "description": "A path under /workspace, or relative to it."},
        "file_text": {"type": "string"},
        "old_str": {"type": "string"},
        "new_str": {"type": "string"},
        "insert_line": {"type": "integer"},
        "view_range": {"type": "array", "items": {"type": "integer"}},
    },
    ["command", "path"],
)
THINK: Final = _function(
    "think",
    "Think out loud: plan, or reason about what you found. It changes nothing.",
    {"thought": {"type": "string"}},
    ["thought"],
)
FINISH: Final = _function(
    "finish",
    "End the task. outcome: changed_code (you changed files as asked), answered (a question or "
    "a request that needs no change; the summary is your answer), or could_not (the summary "
    "says why).",
    {
        "outcome": {"type": "string", "enum": list(FINISH_OUTCOMES)},
        "summary": {"type": "string", "description": "What you did, your answer, or why not."},
        "threads": {
            "type": "object",
            "description": "Only when the task lists review threads: for each thread's id, "
            "what you did about it, or why not.",
        },
    },
    ["outcome", "summary"],
)
TOOLS: Final = (EXECUTE_BASH, EDITOR, THINK, FINISH)
# Exported in the agent's shell: bytecode caches would otherwise end up in the diff.
AGENT_ENV: Final = {"PYTHONDONTWRITEBYTECODE": "1"}
SCHEMAS: Final = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
_JSON_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "array": (list,),
    "object": (dict,),
}


@dataclass(frozen=True)
class Finish:
    outcome: str
    summary: str
    threads: Mapping[str, str] = field(default_factory=dict)
    """What the model says it did about each review thread, by the thread's id."""


@dataclass(frozen=True)
class Observation:
    """What a tool call returned, as the model will read it."""

    content: str
    error: bool = False
    finish: Finish | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


def parse_arguments(tool: str, raw: str) -> dict[str, Any] | str:
    """The validated arguments, or a message for the model saying what is wrong."""
    schema = SCHEMAS.get(tool)
    if schema is None:
        return f"Unknown tool {tool!r}. The tools are: {', '.join(SCHEMAS)}."
    try:
        args = json.loads(raw or "{}")
    except ValueError as error:
        return f"The arguments of {tool} are not valid JSON ({error}). Send a JSON object."
    if not isinstance(args, dict):
        return f"The arguments of {tool} must be a JSON object."
    problem = check_arguments(schema, args)
    return f"Invalid arguments for {tool}: {problem}." if problem else args


def check_arguments(schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    missing = [name for name in schema["required"] if args.get(name) is None]
    if missing:
        return f"missing {', '.join(missing)}"
    for name, value in args.items():
        spec = schema["properties"].get(name)
        if spec is None or value is None:
            continue
        types = _JSON_TYPES[spec["type"]]
        if not isinstance(value, types) or isinstance(value, bool):
            return f"{name} must be of type {spec['type']}"
        if "enum" in spec and value not in spec["enum"]:
            return f"{name} must be one of {', '.join(spec['enum'])}"
    return None


class ToolRunner:
    """Runs tool calls against one sandbox; holds the editor's undo history."""

    def __init__(self, sandbox: Files, output_limit: int, command_timeout: float) -> None:
        self._sandbox = sandbox
        self._editor = FileEditor(sandbox, output_limit)
        self._command_timeout = command_timeout
        self._handlers: dict[str, Callable[[dict[str, Any], float], Observation]] = {
            "execute_bash": self._bash,
            "str_replace_editor": self._edit,
            "think": lambda _args, _left: Observation("Your thought has been recorded."),
            "finish": self._finish,
        }

    def run(self, tool: str, raw_arguments: str, seconds_left: float) -> Observation:
        """Execute one call; `seconds_left` of wall clock bounds a command's timeout."""
        args = parse_arguments(tool, raw_arguments)
        if isinstance(args, str):
            return Observation(args, error=True)
        return self._handlers[tool](args, seconds_left)

    def _bash(self, args: dict[str, Any], seconds_left: float) -> Observation:
        command = str(args["command"])
        if not command.strip():
            return Observation("The command is empty.", error=True)
        requested = float(args.get("timeout") or self._command_timeout)
        timeout = max(1.0, min(requested, self._command_timeout, seconds_left))
        result = self._sandbox.run(command, timeout=timeout, env=AGENT_ENV)
        return bash_observation(result, timeout)

    def _edit(self, args: dict[str, Any], _seconds_left: float) -> Observation:
        try:
            return Observation(self._editor.execute(EditArgs.from_dict(args)))
        except EditError as error:
            return Observation(str(error), error=True)

    def _finish(self, args: dict[str, Any], _seconds_left: float) -> Observation:
        summary = str(args["summary"]).strip()
        if not summary:
            return Observation("finish needs a summary.", error=True)
        threads = thread_replies(args.get("threads"))
        return Observation("Finished.", finish=Finish(str(args["outcome"]), summary, threads))


def thread_replies(value: object) -> dict[str, str]:
    """The `threads` argument of `finish`: non-empty texts by thread id, anything else dropped."""
    if not isinstance(value, dict):
        return {}
    return {
        str(key): text.strip()
        for key, text in value.items()
        if isinstance(text, str) and text.strip()
    }


def bash_observation(result: ExecResult, timeout: float) -> Observation:
    notes = [f"[exit code: {result.exit_code}]"]
    if result.timed_out:
        notes = [f"[the command timed out after {timeout:.0f} s and was killed]"]
    if result.oom_killed:
        notes.append("[the command was killed: out of memory]")
    if result.cancelled:
        notes = ["[the command was interrupted: the job was cancelled]"]
    if result.blocked:
        hosts = ", ".join(result.blocked)
        notes.append(
            f"(the sandbox's egress policy blocked {hosts}; it is not allowed, not a network fault)"
        )
    content = (result.output.rstrip("\n") + "\n" + " ".join(notes)).lstrip("\n")
    failed = result.exit_code != 0 or result.timed_out or result.oom_killed
    details: dict[str, Any] = {
        "exit_code": result.exit_code,
        "duration": round(result.duration, 3),
        "timed_out": result.timed_out,
        "oom_killed": result.oom_killed,
        "cancelled": result.cancelled,
    }
    if result.blocked:
        details["blocked"] = list(result.blocked)
    return Observation(content, error=failed, details=details)
