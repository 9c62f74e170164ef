"""The agent loop's decisions without Docker: `run_agent` against the scripted LLM server and an
in-memory sandbox (the part of `sandbox.Sandbox` the tools use). It finishes when the model
finishes, never asks the LLM once a limit is reached, stops with a reason the user reads, takes
steering messages before a step, and stores a trajectory with every known secret masked."""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import pytest

from resolver.agent import limits as stops
from resolver.agent.controller import job_secrets, run_agent
from resolver.agent.events import Event, Kind
from resolver.agent.llm import llm_config_from
from resolver.agent.task import AgentLimits, AgentResult, AgentTask
from resolver.agent.trajectory import latest_attempt
from resolver.core import logs
from resolver.core.job import InboxMessage, JobContext
from resolver.core.settings import Settings, get_settings
from resolver.store.db import session_scope
from sandbox import ExecResult
from tests.agent.conftest import LLM_KEY, AgentEnv
from tests.support.llm_server import (
    ScriptedLLMServer,
    context_overflow,
    error,
    finish,
    text,
    tool,
)

pytestmark = pytest.mark.usefixtures("agent_env")

LIMITS = AgentLimits(max_iterations=5, max_cost_usd=10.0, max_tokens=100_000, wall_clock_seconds=60)


class MemorySandbox:
    """A sandbox whose files are a dict and whose commands answer from a table."""

    def __init__(self, answers: Mapping[str, tuple[int, str]] | None = None) -> None:
        self.answers = dict(answers or {})
        self.files: dict[str, bytes] = {}
        self.commands: list[str] = []
        self.interrupted = 0

    def run(
        self,
        command: str,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        self.commands.append(command)
        code, output = self.answers.get(command, (127, f"{command}: command not found"))
        return ExecResult(exit_code=code, output=output, duration=0.01, timed_out=False)

    def read_file(self, path: str) -> bytes:
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def write_file(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def list_dir(self, path: str) -> list[str]:
        return sorted(p for p in self.files if p.startswith(path.rstrip("/") + "/"))

    def interrupt(self) -> None:
        self.interrupted += 1


def task(job_id: int, limits: AgentLimits = LIMITS, secrets: tuple[str, ...] = ()) -> AgentTask:
    return AgentTask(job_id, "Make the tests pass.", None, (), limits, secrets=secrets)


def run(
    job_id: int,
    sandbox: MemorySandbox | None = None,
    ctx: JobContext | None = None,
    **changes: Any,
) -> AgentResult:
    box: Any = sandbox or MemorySandbox()
    with session_scope() as session:
        return run_agent(
            session, task(job_id, **changes), box, ctx or JobContext(job_id, get_settings())
        )


def stored_events(job_id: int) -> list[Event]:
    with session_scope() as session:
        return latest_attempt(session, job_id)


def of_kind(job_id: int, kind: str) -> list[dict[str, Any]]:
    events: list[Event] = stored_events(job_id)
    return [dict(e.payload) for e in events if e.kind == kind]


def bash(command: str) -> Any:
    return tool("execute_bash", command=command)


def test_the_models_finish_ends_the_run_with_its_outcome_and_what_it_cost(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(bash("pytest -q"), finish("changed_code", "Fixed the off-by-one."))
    sandbox = MemorySandbox({"pytest -q": (0, "3 passed")})
    result = run(job_id, sandbox)
    assert (result.outcome, result.summary, result.stop_reason) == (
        "changed_code",
        "Fixed the off-by-one.",
        None,
    )
    assert result.steps == 2
    assert result.cost_usd == pytest.approx(2 * (100 * 0.001 + 20 * 0.002))
    assert sandbox.commands == ["pytest -q"]
    [observed, _finished] = of_kind(job_id, Kind.OBSERVATION)
    assert "3 passed" in observed["content"]
    assert of_kind(job_id, Kind.FINISH) == [
        {"outcome": "changed_code", "summary": "Fixed the off-by-one."}
    ]
    assert sandbox.interrupted == 0


def test_no_llm_call_is_made_once_the_step_limit_is_reached(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(bash("ls"), bash("ls"), finish("changed_code", "never asked"))
    result = run(job_id, limits=AgentLimits(2, 10.0, 100_000, 60))
    assert (result.outcome, result.stop_reason) == ("stopped", stops.MAX_ITERATIONS)
    assert result.summary == "Stopped after reaching the limit of 2 steps."
    assert len(llm_server.requests) == 2
    assert of_kind(job_id, Kind.STOP)[0]["reason"] == stops.MAX_ITERATIONS


def test_a_cost_budget_spent_stops_the_run_before_the_next_call(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(bash("ls"), finish("changed_code", "never asked"))
    result = run(job_id, limits=AgentLimits(5, 0.1, 100_000, 60))
    assert (result.outcome, result.stop_reason) == ("stopped", stops.MAX_COST)
    assert result.summary == "Stopped: the job spent $0.14 of its $0.10 budget."
    assert len(llm_server.requests) == 1


def test_a_cancelled_job_asks_the_llm_nothing(job_id: int, llm_server: ScriptedLLMServer) -> None:
    ctx = JobContext(job_id, get_settings())
    ctx.cancel()
    result = run(job_id, ctx=ctx)
    assert (result.stop_reason, result.summary) == (stops.CANCELLED, "The job was cancelled.")
    assert llm_server.requests == []


def test_cancelling_interrupts_the_sandbox_while_the_job_runs(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    ctx = JobContext(job_id, get_settings())
    sandbox = MemorySandbox()

    def cancel_at_first_call(request: dict[str, Any]) -> Any:
        ctx.cancel()
        return bash("sleep 100")

    llm_server.set_script(cancel_at_first_call)
    result = run(job_id, sandbox, ctx)
    assert result.stop_reason == stops.CANCELLED
    assert sandbox.interrupted == 1 and sandbox.commands == []
    assert ctx.on_cancel == []


def test_a_refused_request_stops_the_run_saying_the_provider_refused_it(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(error(400, "Invalid schema for function 'finish'"))
    result = run(job_id)
    assert result.stop_reason == stops.LLM_ERROR
    assert result.summary.startswith("Stopped: the LLM provider refused the request (")
    assert "Invalid schema for function 'finish'" in result.summary
    assert len(llm_server.requests) == 1


def test_a_context_overflow_with_nothing_to_condense_stops_the_run(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(context_overflow())
    result = run(job_id)
    assert result.stop_reason == stops.CONTEXT_WINDOW
    assert "no longer fits the model's context window" in result.summary


def test_a_steering_message_joins_the_conversation_before_the_next_step(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    asked: list[int] = []

    def inbox(step: int) -> list[InboxMessage]:
        asked.append(step)
        return [InboxMessage("ada", "Use the stdlib only.")] if step == 2 else []

    ctx = JobContext(job_id, get_settings(), inbox=inbox)
    llm_server.push(text("Looking around."), finish("answered", "Done."))
    result = run(job_id, ctx=ctx)
    assert result.outcome == "answered"
    assert asked == [1, 2]
    [steer] = of_kind(job_id, Kind.STEER)
    assert steer["author"] == "ada" and "Use the stdlib only." in steer["content"]
    second = json.dumps(llm_server.requests[1]["messages"])
    assert "Use the stdlib only." in second
    assert "Use the stdlib only." not in json.dumps(llm_server.requests[0]["messages"])


def test_secrets_the_job_knows_never_reach_the_stored_trajectory(
    job_id: int, llm_server: ScriptedLLMServer
) -> None:
    token = "ghs_unit_test_token_0123456789abcdef"
    llm_server.push(bash("env"), finish("answered", "Printed the environment."))
    sandbox = MemorySandbox({"env": (0, f"TOKEN={token}\nLLM={LLM_KEY}\n")})
    run(job_id, sandbox, secrets=(token,))
    stored = json.dumps([dict(e.payload) for e in stored_events(job_id)])
    assert "TOKEN=" in stored
    assert token not in stored and LLM_KEY not in stored
    sent = json.dumps(llm_server.requests[1]["messages"])
    assert token not in sent and LLM_KEY not in sent


def test_a_jobs_token_is_masked_in_the_logs_among_the_most_recent_not_for_good(
    job_id: int, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each job's token is new: masked for good, the mask grew with every job, and each new
    one rebuilt all of it."""
    monkeypatch.setattr(logs, "_known", set())
    monkeypatch.setattr(logs, "_passing", OrderedDict())
    monkeypatch.setattr(logs, "_redactor", logs.Redactor())
    token = "job-token-" + secrets.token_hex(12)
    llm_server.push(finish("answered", "Nothing to do."))
    run(job_id, secrets=(token,))
    assert token in logs._passing and logs._known == set()
    assert logs.redact(f"git said {token}") == "git said ******"


def test_the_jobs_secrets_are_the_tasks_the_llm_key_and_every_secret_setting(
    agent_env: AgentEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESOLVER_GITHUB_WEBHOOK_SECRET", "hook-one , hook-two")
    get_settings.cache_clear()
    settings: Settings = get_settings()
    found = job_secrets(task(1, secrets=("repo-token", " ")), settings, llm_config_from(settings))
    assert {"repo-token", LLM_KEY, "hook-one", "hook-two", "hook-one , hook-two"} <= set(found)
    assert "" not in found and " " not in found
