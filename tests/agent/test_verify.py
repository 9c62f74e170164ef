"""The Verification record: which commands count, and what their last run says."""

from __future__ import annotations

import json

import pytest

from resolver.agent.events import Event, Kind
from resolver.agent.verify import build_verification, classify, configured_commands
from resolver.contract.verification import Verification, verification_of


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("python -m pytest -q", "test"),
        ("python3.12 -m pytest tests/", "test"),
        ("cd /workspace && uv run pytest -x", "test"),
        (".venv/bin/pytest", "test"),
        ("python -m unittest discover", "test"),
        ("FOO=1 timeout 60 go test ./...", "test"),
        ("npm test", "test"),
        ("yarn run test --watch=false", "test"),
        ("cargo test", "test"),
        ("bundle exec rspec spec/a_spec.rb", "test"),
        ("make check", "test"),
        ("dotnet test", "test"),
        ("ruff check .", "lint"),
        ("mypy resolver", "lint"),
        ("npx eslint src", "lint"),
        ("go vet ./...", "lint"),
        ("cargo clippy -- -D warnings", "lint"),
        ("pnpm run build", "build"),
        ("./gradlew build", "build"),
        ("cargo build --release", "build"),
    ],
)
def test_recognised_runners(command: str, kind: str) -> None:
    check = classify(command)
    assert check is not None and check.kind == kind


@pytest.mark.parametrize(
    "command", ["ls -la", "cat pytest.ini", "make", "echo pytest", "git diff", "grep -r test ."]
)
def test_other_commands_are_not_checks(command: str) -> None:
    assert classify(command) is None


@pytest.mark.parametrize(
    ("command", "masked"),
    [
        ("python -m pytest -q 2>&1 | tail -n 5", True),
        ("set -o pipefail; pytest | tail", False),
        ("ruff check . || true", True),
        ("pytest; echo done", True),
        ("cd src && pytest", False),
        ("pytest -q 2>&1", False),
    ],
)
def test_an_exit_code_that_is_not_the_runners_is_unknown(command: str, masked: bool) -> None:
    check = classify(command)
    assert check is not None and check.masked is masked


def test_a_configured_command_counts_even_when_unrecognised() -> None:
    configured = configured_commands(
        {"commands": {"test": ["./ci/run-tests.sh"], "lint": "scripts/lint", "build": [3]}}
    )
    assert configured == {"test": ("./ci/run-tests.sh",), "lint": ("scripts/lint",)}
    check = classify("./ci/run-tests.sh --fast", configured)
    assert check is not None and check.kind == "test"
    assert configured_commands({"commands": "make test"}) == {}
    assert configured_commands({"test_command": "make ci"}) == {"test": ("make ci",)}


def trajectory(*runs: tuple[str, int]) -> list[Event]:
    events = []
    for index, (command, exit_code) in enumerate(runs):
        call = f"call-{index}"
        arguments = json.dumps({"command": command})
        action = {
            "step": index + 1,
            "call_id": call,
            "tool": "execute_bash",
            "arguments": arguments,
        }
        events.append(Event(2 * index + 1, Kind.ACTION, action))
        observation = {"step": index + 1, "call_id": call, "tool": "execute_bash", "content": ""}
        events.append(
            Event(2 * index + 2, Kind.OBSERVATION, {**observation, "exit_code": exit_code})
        )
    return events


def test_each_command_keeps_its_last_run_and_its_count() -> None:
    events = trajectory(
        ("python -m pytest -q", 1),
        ("cat calc.py", 0),
        ("ruff check .", 0),
        ("python -m pytest -q", 0),
        ("python -m pytest -q", 0),
    )
    verification = build_verification(events)
    pytest_run, ruff = verification.checks
    assert (pytest_run.command, pytest_run.exit_code, pytest_run.runs) == (
        "python -m pytest -q",
        0,
        3,
    )
    assert pytest_run.result == "passed" and pytest_run.passes == 2
    assert (ruff.kind, ruff.result, ruff.runs) == ("lint", "passed", 1)
    assert verification.not_run == ()


def test_a_failing_last_run_fails_even_after_an_earlier_pass() -> None:
    [check] = build_verification(trajectory(("pytest", 0), ("pytest", 2))).checks
    assert (check.result, check.exit_code, check.passes, check.runs) == ("failed", 2, 1, 2)


def test_no_tests_ran_is_a_finding() -> None:
    verification = build_verification(trajectory(("cat calc.py", 0)))
    assert verification.checks == () and verification.not_run == ("test", "lint")
    configured = {"build": ("make dist",)}
    assert build_verification([], configured).not_run == ("test", "lint", "build")


def test_what_the_model_says_is_not_a_run() -> None:
    """Only the host's observation of a command counts: a command without one (the model's
    words, a cancelled call) is no run."""
    claimed = trajectory(("pytest", 0))[:1]
    said = [Event(3, Kind.MESSAGE, {"step": 2, "content": "I ran pytest: all green"})]
    assert build_verification([*claimed, *said]).checks == ()


def test_the_record_round_trips_through_the_jobs_json() -> None:
    verification = build_verification(trajectory(("pytest -q", 0), ("ruff check", 1)))
    assert verification_of(json.loads(json.dumps(verification.as_dict()))) == verification
    assert verification_of(None) is None
    assert verification_of({"checks": [{"nonsense": 1}]}) is None
    assert verification_of({}) == Verification()
