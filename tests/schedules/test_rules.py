"""The pure rules of schedules: the file format, the built-in tasks' instructions, the inputs
that decide whether to propose again, the run limits, and what a run does with its PR."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from resolver.contract.commands import parse_command, schedule_to_run
from resolver.schedules.decide import DECLINED, OPEN, Action, Finding, Remembered, decide
from resolver.schedules.limits import (
    Limits,
    Usage,
    blocking,
    repo_defaults,
    repo_limits,
    service_limits,
)
from resolver.schedules.prompts import Inputs, build_instruction, parse_manifests
from resolver.schedules.spec import (
    FIX_DEFAULT_BRANCH,
    UPDATE_DEPENDENCIES,
    ScheduleError,
    ScheduleSpec,
    build_spec,
    parse_file,
)

FILE = """
limits:
  runs_per_hour: 2
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
    prompt: Tidy the lint warnings.
    dry_run: true
"""


def test_the_documented_file_parses() -> None:
    parsed = parse_file(FILE)
    assert parsed.limits == {"runs_per_hour": 2}
    deps, tests, lint = parsed.schedules
    assert deps == ScheduleSpec(
        "weekly-deps", "0 6 * * 1", "Europe/Berlin", UPDATE_DEPENDENCIES, max_cost_usd=2
    )
    assert (tests.task, tests.test_command, tests.timezone) == (
        FIX_DEFAULT_BRANCH,
        "pytest -q",
        "UTC",
    )
    assert (lint.task, lint.prompt, lint.dry_run) == ("custom", "Tidy the lint warnings.", True)


def test_an_empty_file_has_no_schedules() -> None:
    assert parse_file("").schedules == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("schedules: [", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        ("jobs: []", "must be a mapping"),
        ("schedules:\n  - name: a\n", r"schedules\[0\]: every schedule needs"),
        ("schedules:\n  - {name: A b, cron: '@daily', prompt: x}\n", "lower-case"),
        ("schedules:\n  - {name: a, cron: '@daily'}\n", "needs a prompt"),
        ("schedules:\n  - {name: a, cron: '@daily', task: deploy}\n", "use one of"),
        ("schedules:\n  - {name: a, cron: '99 * * * *', prompt: x}\n", "not a valid"),
        ("schedules:\n  - {name: a, cron: '@daily', prompt: x, timezone: CEST}\n", "IANA"),
        ("schedules:\n  - {name: a, cron: '@daily', prompt: x, max_cost_usd: -1}\n", "positive"),
        ("schedules:\n  - {name: a, cron: '@daily', prompt: x, max_iterations: 2.5}\n", "whole"),
        ("schedules:\n  - {name: a, cron: '@daily', prompt: x, when: now}\n", "unknown keys"),
        ("schedules:\n  - {name: a, cron: '@daily', prompt: x, dry_run: 'yes'}\n", "true or"),
        (
            "schedules:\n  - {name: a, cron: '@daily', prompt: x}\n"
            "  - {name: a, cron: '@daily', prompt: y}\n",
            "unique",
        ),
        ("limits: {runs_per_hour: 0}", "at least 1"),
        ("limits: {per_day: 3}", "unknown limit"),
    ],
)
def test_a_bad_file_is_refused_naming_what_to_fix(text: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        parse_file(text)


def test_cli_values_are_checked_the_same_way() -> None:
    spec = build_spec({"name": "n", "cron": "@daily", "prompt": "p", "dry_run": None})
    assert spec.dry_run is False
    with pytest.raises(ScheduleError, match="non-empty"):
        build_spec({"name": "n", "cron": "@daily", "prompt": "  "})


LS_TREE = (
    "100644 blob aaa\tREADME.md\n"
    "100644 blob bbb\tpyproject.toml\n"
    "100644 blob ccc\tweb/package.json\n"
    "100644 blob ddd\trequirements-dev.txt\n"
    "040000 tree eee\tweb\n"
)


def test_manifests_are_found_at_any_depth_and_their_digest_follows_their_contents() -> None:
    found = parse_manifests(LS_TREE)
    assert found.paths == ("pyproject.toml", "requirements-dev.txt", "web/package.json")
    assert parse_manifests(LS_TREE.replace("aaa", "zzz")).digest == found.digest
    assert parse_manifests(LS_TREE.replace("bbb", "zzz")).digest != found.digest


def test_inputs_change_with_the_prompt_the_limits_and_the_manifests() -> None:
    base = Inputs("custom", "tidy", None, None, None, "m1")
    assert base.digest() == Inputs("custom", "tidy", None, None, None, "m1").digest()
    for changed in (
        Inputs("custom", "tidy up", None, None, None, "m1"),
        Inputs("custom", "tidy", None, 10, None, "m1"),
        Inputs("custom", "tidy", None, None, None, "m2"),
    ):
        assert changed.digest() != base.digest()


def test_built_in_tasks_say_what_to_do_and_when_to_change_nothing() -> None:
    deps = build_instruction(UPDATE_DEPENDENCIES, None, ["uv.lock"], "pytest -q")
    assert "`uv.lock`" in deps and "`pytest -q`" in deps and "change nothing" in deps
    fix = build_instruction(FIX_DEFAULT_BRANCH, "Prefer small fixes.", [], "make test")
    assert "`make test`" in fix and "weaken" in fix and fix.endswith("Prefer small fixes.")
    assert build_instruction("custom", " Tidy. ", [], None) == "Tidy."


def test_limits_wait_on_the_first_that_is_full_and_say_which() -> None:
    limits = Limits(runs_per_hour=2, concurrent_runs=1, open_prs=1)
    scope = "the repository's"
    assert blocking(limits, Usage(1, 0, 0), scope, True) is None
    assert (
        blocking(limits, Usage(0, 1, 0), scope, True) == "the repository's limit of 1 run at once"
    )
    assert (
        blocking(limits, Usage(2, 0, 0), scope, True) == "the repository's limit of 2 runs per hour"
    )
    assert blocking(limits, Usage(0, 0, 1), scope, True) == (
        "the repository's limit of 1 open pull request"
    )
    # A run that can only update its own pull request is not held by the open-PR limit.
    assert blocking(limits, Usage(0, 0, 1), scope, False) is None


def test_a_repository_file_may_tighten_the_operators_limits_but_never_raise_them() -> None:
    defaults = Limits(runs_per_hour=4, concurrent_runs=1, open_prs=5)
    assert repo_limits({}, {}, defaults) == defaults
    tightened = repo_limits({"runs_per_hour": 10}, {"runs_per_hour": 3, "open_prs": 99}, defaults)
    assert tightened == Limits(runs_per_hour=3, concurrent_runs=1, open_prs=5)


def test_the_limits_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from resolver.core.settings import Settings

    monkeypatch.setenv("RESOLVER_SCHEDULE_OPEN_PRS", "7")
    monkeypatch.setenv("RESOLVER_SCHEDULE_REPO_RUNS_PER_HOUR", "2")
    settings = Settings(_env_file=None, secret_keys=Fernet.generate_key().decode())  # type: ignore[call-arg]
    assert service_limits(settings) == Limits(runs_per_hour=60, concurrent_runs=4, open_prs=7)
    assert repo_defaults(settings) == Limits(runs_per_hour=2, concurrent_runs=1, open_prs=5)


OPEN_PR = Remembered(OPEN, "resolver/schedule-lint", "abc", "inputs-1")


@pytest.mark.parametrize(
    ("remembered", "finding", "inputs", "action", "state"),
    [
        (Remembered(), Finding.NONE, "inputs-1", Action.PROPOSE, None),
        (OPEN_PR, Finding.OPEN, "inputs-2", Action.UPDATE, OPEN),
        (OPEN_PR, Finding.EDITED, "inputs-1", Action.SKIP_EDITED, OPEN),
        (OPEN_PR, Finding.MERGED, "inputs-1", Action.PROPOSE, None),
        (OPEN_PR, Finding.NEVER_OPENED, "inputs-1", Action.PROPOSE, None),
        (OPEN_PR, Finding.DECLINED, "inputs-1", Action.SKIP_DECLINED, DECLINED),
        (OPEN_PR, Finding.DECLINED, "inputs-2", Action.PROPOSE, DECLINED),
        (
            Remembered(DECLINED, inputs="inputs-1"),
            Finding.NONE,
            "inputs-1",
            Action.SKIP_DECLINED,
            DECLINED,
        ),
        (
            Remembered(DECLINED, inputs="inputs-1"),
            Finding.NONE,
            "inputs-2",
            Action.PROPOSE,
            DECLINED,
        ),
    ],
)
def test_one_pull_request_per_schedule(
    remembered: Remembered, finding: Finding, inputs: str, action: Action, state: str | None
) -> None:
    decision = decide(remembered, finding, inputs)
    assert (decision.action, decision.remembered.state) == (action, state)


@pytest.mark.parametrize(
    ("text", "schedule"),
    [
        ("run weekly-deps", "weekly-deps"),
        ("Run schedule Nightly now!", "nightly"),
        ("run `lint`", "lint"),
        ("run the tests", None),
        ("run the tests and fix what fails", None),
        ("run", None),
        ("stop", None),
    ],
)
def test_run_names_one_schedule_and_a_sentence_stays_a_request(
    text: str, schedule: str | None
) -> None:
    assert schedule_to_run(text) == schedule
    assert (parse_command(text) == "run") is (schedule is not None)
