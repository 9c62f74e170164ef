"""What a schedule says, from the CLI or from `.resolver/schedules.yml`, checked. Pure.

limits:                 # optional; may only tighten the service's limits for this repo
  runs_per_hour: 2
  concurrent_runs: 1
  open_prs: 3
schedules:
  - name: weekly-deps
    cron: "0 6 * * 1"
    timezone: Europe/Berlin
    task: update-dependencies
    max_cost_usd: 2
  - name: nightly-tests
    cron: "0 2 * * *"
    task: fix-default-branch
    test_command: pytest -q
  - name: lint
    cron: "0 7 * * 5"
    prompt: Tidy the warnings `ruff check` reports.
    dry_run: true
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from resolver.core.yamlfile import RepoYamlError, load_yaml
from resolver.schedules.cron import CronError, check

FILE_PATH: Final = ".resolver/schedules.yml"
UPDATE_DEPENDENCIES: Final = "update-dependencies"
FIX_DEFAULT_BRANCH: Final = "fix-default-branch"
CUSTOM: Final = "custom"
TASKS: Final = (UPDATE_DEPENDENCIES, FIX_DEFAULT_BRANCH, CUSTOM)
NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
MAX_PROMPT: Final = 4000
MAX_LIMIT: Final = 1_000_000
"""The largest `max_iterations` or `max_cost_usd` a schedule may name (the operator's lower
ceiling applies anyway): what its column holds."""
MAX_CRON: Final = 100
"""The longest cron expression a schedule may have (its column's width)."""
MAX_SCHEDULES: Final = 50
"""The most schedules one repository's file may hold: each is walked at every beat tick."""
MAX_COMMAND: Final = 500
LIMIT_KEYS: Final = ("runs_per_hour", "concurrent_runs", "open_prs")


class ScheduleError(ValueError):
    """A schedule that cannot be stored; the message says what to write instead."""


@dataclass(frozen=True)
class ScheduleSpec:
    """One schedule as its author wrote it."""

    name: str
    cron: str
    timezone: str = "UTC"
    task: str = CUSTOM
    prompt: str | None = None
    test_command: str | None = None
    dry_run: bool = False
    max_iterations: int | None = None
    max_cost_usd: float | None = None


@dataclass(frozen=True)
class ScheduleFile:
    """`.resolver/schedules.yml`: its schedules and the limits it sets for the repository."""

    schedules: tuple[ScheduleSpec, ...]
    limits: Mapping[str, int]


SPEC_KEYS: Final = frozenset(f.name for f in fields(ScheduleSpec))


def build_spec(values: Mapping[str, Any]) -> ScheduleSpec:
    """A checked ScheduleSpec from plain values (a YAML mapping or CLI options)."""
    unknown = sorted(map(str, set(values) - SPEC_KEYS))
    if unknown:
        raise ScheduleError(f"unknown keys {unknown}; known: {sorted(SPEC_KEYS)}")
    try:
        spec = ScheduleSpec(**{k: v for k, v in values.items() if v is not None})
    except TypeError:
        raise ScheduleError("every schedule needs a `name` and a `cron`") from None
    _check_text(spec)
    _check_task(spec)
    _check_limits(spec)
    try:
        check(spec.cron, spec.timezone)
    except CronError as error:
        raise ScheduleError(str(error)) from None
    return spec


def _check_text(spec: ScheduleSpec) -> None:
    if not isinstance(spec.name, str) or not NAME.fullmatch(spec.name):
        shown = (
            repr(spec.name)[:60] if isinstance(spec.name, str) else f"a {type(spec.name).__name__}"
        )
        raise ScheduleError(
            f"name {shown}: use lower-case letters, digits, `.`, `_` and `-` (`weekly-deps`)"
        )
    for key in ("cron", "timezone"):
        if not isinstance(getattr(spec, key), str):
            raise ScheduleError(f"{key} must be text")
    if len(spec.cron) > MAX_CRON:
        raise ScheduleError(f"cron is longer than {MAX_CRON} characters")
    if not isinstance(spec.dry_run, bool):
        raise ScheduleError("dry_run must be true or false")


def _check_task(spec: ScheduleSpec) -> None:
    if spec.task not in TASKS:
        shown = (
            repr(spec.task)[:60] if isinstance(spec.task, str) else f"a {type(spec.task).__name__}"
        )
        raise ScheduleError(f"task {shown}: use one of {', '.join(TASKS)}")
    if spec.prompt is not None and (not isinstance(spec.prompt, str) or not spec.prompt.strip()):
        raise ScheduleError("prompt must be non-empty text")
    if spec.task == CUSTOM and not spec.prompt:
        raise ScheduleError("a custom task needs a prompt: what should the agent do?")
    if spec.prompt and len(spec.prompt) > MAX_PROMPT:
        raise ScheduleError(f"prompt is longer than {MAX_PROMPT} characters")
    command = spec.test_command
    if command is not None and not (isinstance(command, str) and 0 < len(command) <= MAX_COMMAND):
        raise ScheduleError(f"test_command must be text of at most {MAX_COMMAND} characters")


def _check_limits(spec: ScheduleSpec) -> None:
    for key, kind in (("max_iterations", int), ("max_cost_usd", float)):
        value = getattr(spec, key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ScheduleError(f"{key} must be a positive number, not a {type(value).__name__}")
        if not math.isfinite(value) or not 0 < value <= MAX_LIMIT:
            raise ScheduleError(f"{key} must be a positive number of at most {MAX_LIMIT}")
        if kind is int and value != int(value):
            raise ScheduleError(f"{key} must be a whole number")


def parse_file(text: str) -> ScheduleFile:
    """`.resolver/schedules.yml` as a ScheduleFile; ScheduleError names the entry at fault."""
    try:
        data = load_yaml(text, FILE_PATH)
    except RepoYamlError as error:
        raise ScheduleError(str(error)) from None
    data = {} if data is None else data
    if not isinstance(data, dict) or not set(data) <= {"schedules", "limits"}:
        raise ScheduleError(f"{FILE_PATH} must be a mapping with `schedules` (and `limits`)")
    entries = data.get("schedules") or []
    if not isinstance(entries, list):
        raise ScheduleError(f"{FILE_PATH}: `schedules` must be a list")
    if len(entries) > MAX_SCHEDULES:
        raise ScheduleError(f"{FILE_PATH} has {len(entries)} schedules; at most {MAX_SCHEDULES}")
    specs = tuple(_entry(index, entry) for index, entry in enumerate(entries))
    counted = Counter(spec.name for spec in specs)
    doubled = sorted(name for name, count in counted.items() if count > 1)
    if doubled:
        raise ScheduleError(f"{FILE_PATH}: schedule names must be unique: {doubled}")
    return ScheduleFile(specs, parse_limits(data.get("limits") or {}))


def _entry(index: int, entry: object) -> ScheduleSpec:
    if not isinstance(entry, dict):
        raise ScheduleError(f"{FILE_PATH}: schedules[{index}] must be a mapping")
    try:
        return build_spec(entry)
    except ScheduleError as error:
        raise ScheduleError(f"{FILE_PATH}: schedules[{index}]: {error}") from None


def parse_limits(values: object) -> dict[str, int]:
    """Run limits for a repository: runs_per_hour, concurrent_runs, open_prs (positive)."""
    if not isinstance(values, dict):
        raise ScheduleError("limits must be a mapping of runs_per_hour, concurrent_runs, open_prs")
    limits: dict[str, int] = {}
    for key, value in values.items():
        if key not in LIMIT_KEYS:
            raise ScheduleError(f"unknown limit {key!r}; known: {', '.join(LIMIT_KEYS)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScheduleError(f"limit {key} must be a whole number of at least 1")
        limits[key] = value
    return limits
