"""Proof of work: which build, test and lint commands the agent ran, from its trajectory. Pure.

The record is made from the `action`/`observation` events the host wrote as the tools ran,
never from what the model says it did. A command counts when the repository's
`.resolver/config.yml` names it (`commands: {test: [...], lint: [...], build: [...]}`) or when
it starts a runner people recognise (pytest, npm test, go vet, cargo clippy, …). Each distinct
command line keeps its last run's exit code and how many times it ran. The values it builds
(`Check`, `Verification`) are `resolver.contract.verification`'s, which the callbacks read.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from resolver.agent.events import Event, Kind
from resolver.contract.verification import KINDS, Check, CheckKind, Verification

# Shown whether or not a repository configures them: a change nobody tested or linted says so.
ALWAYS_REPORTED: Final[tuple[CheckKind, ...]] = ("test", "lint")
MAX_COMMAND_CHARS: Final = 200
MAX_CHECKS: Final = 20

# The leading words of a command (after wrappers such as `uv run` or `timeout 60`) → its kind.
RUNNERS: Final[Mapping[tuple[str, ...], CheckKind]] = {
    **{(word,): "test" for word in ("pytest", "py.test", "tox", "nox", "jest", "vitest")},
    **{(word,): "test" for word in ("mocha", "rspec", "phpunit", "ctest", "trial")},
    ("unittest",): "test",
    ("go", "test"): "test",
    ("cargo", "test"): "test",
    ("cargo", "nextest"): "test",
    ("dotnet", "test"): "test",
    ("mvn", "test"): "test",
    ("mvn", "verify"): "test",
    ("gradle", "test"): "test",
    ("gradlew", "test"): "test",
    ("gradle", "check"): "test",
    ("gradlew", "check"): "test",
    ("make", "test"): "test",
    ("make", "check"): "test",
    ("rake", "test"): "test",
    ("rails", "test"): "test",
    ("django-admin", "test"): "test",
    ("manage.py", "test"): "test",
    **{(tool, "test"): "test" for tool in ("npm", "yarn", "pnpm", "bun")},
    **{(tool, "run", "test"): "test" for tool in ("npm", "yarn", "pnpm", "bun")},
    **{(word,): "lint" for word in ("ruff", "flake8", "pylint", "mypy", "pyright", "black")},
    **{(word,): "lint" for word in ("eslint", "tsc", "prettier", "rubocop", "shellcheck")},
    **{(word,): "lint" for word in ("golangci-lint", "isort", "pre-commit", "biome")},
    ("go", "vet"): "lint",
    ("gofmt",): "lint",
    ("cargo", "clippy"): "lint",
    ("cargo", "fmt"): "lint",
    ("make", "lint"): "lint",
    ("dotnet", "format"): "lint",
    **{(tool, "lint"): "lint" for tool in ("npm", "yarn", "pnpm", "bun")},
    **{(tool, "run", "lint"): "lint" for tool in ("npm", "yarn", "pnpm", "bun")},
    ("go", "build"): "build",
    ("cargo", "build"): "build",
    ("cargo", "check"): "build",
    ("dotnet", "build"): "build",
    ("mvn", "package"): "build",
    ("mvn", "compile"): "build",
    ("mvn", "install"): "build",
    ("gradle", "build"): "build",
    ("gradlew", "build"): "build",
    ("make", "build"): "build",
    ("make", "all"): "build",
    **{(tool, "build"): "build" for tool in ("npm", "yarn", "pnpm", "bun")},
    **{(tool, "run", "build"): "build" for tool in ("npm", "yarn", "pnpm", "bun")},
}
# Words that run the next words as the command: `uv run pytest` is pytest.
WRAPPERS: Final[Mapping[str, int]] = {
    "env": 0,
    "time": 0,
    "command": 0,
    "exec": 0,
    "nice": 0,
    "xvfb-run": 0,
    "npx": 0,
    "bunx": 0,
    "timeout": 1,  # timeout SECONDS ...
}
RUN_WRAPPERS: Final = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "bundle"})
_PYTHON: Final = re.compile(r"python(?:\d(?:\.\d+)?)?")
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Shell control operators between simple commands (quotes are not parsed: good enough to
# find a runner's start; the whole line is what is shown).
_OPERATOR: Final = re.compile(r"(\|\||&&|\||;|\n)")


def configured_commands(repo_config: Mapping[str, Any]) -> dict[CheckKind, tuple[str, ...]]:
    """`commands: {test: [...], lint: [...], build: [...]}` from `.resolver/config.yml`, as
    data: strings only (a single string is a list of one); anything else is ignored."""
    section = repo_config.get("commands")
    section = dict(section) if isinstance(section, Mapping) else {}
    if "test" not in section and isinstance(repo_config.get("test_command"), str):
        section["test"] = repo_config["test_command"]  # the schedules' older key
    found: dict[CheckKind, tuple[str, ...]] = {}
    for kind in KINDS:
        value = section.get(kind)
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        commands = tuple(_normal(item) for item in items if isinstance(item, str) and item.strip())
        if commands:
            found[kind] = commands
    return found


def classify(command: str, configured: Mapping[CheckKind, Sequence[str]] = {}) -> Check | None:
    """The check a command line is (its first building, testing or linting part); None if it
    is none. Configured commands win over the recognised runners."""
    parts = [*_OPERATOR.split(command), ""]
    for index, (segment, after) in enumerate(zip(parts[::2], parts[1::2], strict=False)):
        kind = _configured_kind(segment, configured) or _runner_kind(segment)
        if kind is not None:
            rest = "".join(parts[2 * index + 2 :]).strip()
            return Check(_normal(command), kind, None, 0, masked=_masks(after, rest, command))
    return None


def _masks(operator: str, rest: str, command: str) -> bool:
    """Whether what follows a runner decides the line's exit code instead of the runner."""
    if not rest:
        return False
    if operator == "|":
        return "pipefail" not in command
    return operator in ("||", ";", "\n")


def build_verification(
    events: Iterable[Event], configured: Mapping[CheckKind, Sequence[str]] = {}
) -> Verification:
    """Every distinct check the trajectory shows, in the order first run, with its last run."""
    commands: dict[str, str] = {}
    checks: dict[str, Check] = {}
    for event in events:
        call = str(event.payload.get("call_id"))
        if event.kind == Kind.ACTION and event.payload.get("tool") == "execute_bash":
            command = _command_of(event.payload.get("arguments"))
            if command is not None:
                commands[call] = command
        elif event.kind == Kind.OBSERVATION and call in commands:
            _record_run(checks, commands.pop(call), event.payload, configured)
    found = tuple(checks.values())[:MAX_CHECKS]
    ran = {check.kind for check in found}
    wanted = [*ALWAYS_REPORTED, *(kind for kind in configured if kind not in ALWAYS_REPORTED)]
    return Verification(found, tuple(kind for kind in KINDS if kind in wanted and kind not in ran))


def _record_run(
    checks: dict[str, Check],
    command: str,
    payload: Mapping[str, Any],
    configured: Mapping[CheckKind, Sequence[str]],
) -> None:
    check = classify(command, configured)
    if check is None or payload.get("cancelled"):
        return
    exit_code = payload.get("exit_code")
    timed_out = bool(payload.get("timed_out"))
    earlier = checks.get(check.command)
    passed = exit_code == 0 and not timed_out
    # Overwriting keeps the command's place: checks stay in the order they first ran.
    checks[check.command] = Check(
        command=check.command,
        kind=check.kind,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        runs=(earlier.runs if earlier else 0) + 1,
        timed_out=timed_out,
        passes=(earlier.passes if earlier else 0) + int(passed),
        masked=check.masked,
    )


def _command_of(arguments: object) -> str | None:
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return None
    command = args.get("command") if isinstance(args, Mapping) else None
    return command if isinstance(command, str) and command.strip() else None


def _normal(command: str) -> str:
    """One line, single spaces, cut: how a command is keyed and shown."""
    text = " ".join(command.split())
    return text if len(text) <= MAX_COMMAND_CHARS else text[: MAX_COMMAND_CHARS - 1] + "…"


def _configured_kind(
    segment: str, configured: Mapping[CheckKind, Sequence[str]]
) -> CheckKind | None:
    line = _normal(segment)
    for kind, commands in configured.items():
        if any(line == known or line.startswith(known + " ") for known in commands):
            return kind
    return None


def _runner_kind(segment: str) -> CheckKind | None:
    words = _words(segment)
    for size in (3, 2, 1):
        kind = RUNNERS.get(tuple(words[:size]))
        if kind is not None:
            return kind
    return None


def _words(segment: str) -> list[str]:
    """The command's words without assignments, wrappers, paths or `python -m`."""
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    while words:
        first = words[0].rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(words[0]) or first in ("sudo",):
            words = words[1:]
        elif first in WRAPPERS:
            words = words[1 + WRAPPERS[first] :]
        elif _runs_next(first, words):
            words = words[2:]
        elif _PYTHON.fullmatch(first) and len(words) > 1 and words[1].endswith("manage.py"):
            words = ["manage.py", *words[2:]]
        else:
            return [first, *words[1:]]
    return []


def _runs_next(first: str, words: list[str]) -> bool:
    """`uv run X`, `bundle exec X`, `python -m X`: the command is X."""
    if first in RUN_WRAPPERS:
        return len(words) > 2 and words[1] in ("run", "exec")
    return _PYTHON.fullmatch(first) is not None and len(words) > 2 and words[1] == "-m"
