"""Shared budgets around the real loop: a job over a cap never starts (no LLM call, no
sandbox), and a running job that crosses one stops at its next step and says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resolver.agent.result import run_result
from resolver.callbacks import record, status
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.db import session_scope
from tests.agent.conftest import AgentEnv, make_repo
from tests.agent.test_loop import CALL_COST, of_kind, session, stored, thinking
from tests.support.llm_server import Reply, ScriptedLLMServer


def started_job(requester: str = "ada", repo: str = "acme/app") -> int:
    """A job as the worker holds it: leased, so it has started today."""
    with session_scope() as db:
        job = jobs.create_job(
            db, jobs.NewJob(source="cli", task="do it", repo=repo, requester=requester)
        )
        job_id = job.id
    with session_scope() as db:
        assert jobs.take_lease(db, job_id, f"owner-{job_id}", 60)
    return job_id


def spent_earlier(usd: float, requester: str = "ada") -> None:
    job_id = started_job(requester)
    with session_scope() as db:
        job = jobs.get_job(db, job_id)
        job.cost_usd = usd
        jobs.finish_job(db, job, JobState.SUCCEEDED, Outcome.ANSWERED)


def caps(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name, value in values.items():
        monkeypatch.setenv(f"RESOLVER_BUDGET_{name.upper()}", value)
    get_settings.cache_clear()


def finished_status(job_id: int, result: Any) -> tuple[Any, str]:
    outcome = run_result(result.agent, result.diff)
    with session_scope() as db:
        job = jobs.get_job(db, job_id)
        jobs.finish_job(
            db, job, outcome.state, outcome.outcome, error=outcome.error, result=outcome.result
        )
        return outcome, status.render(record.view_of(db, job, get_settings()))


def test_a_job_over_the_repository_cap_is_not_started_and_says_why(
    agent_env: AgentEnv,
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caps(monkeypatch, repo_daily_usd="5")
    spent_earlier(3.0)
    job_id = started_job()
    result = session(job_id, make_repo(tmp_path / "r", {"a.txt": "a\n"}))
    assert llm_server.requests == []
    assert result.agent.stop_reason == "budget"
    outcome, shown = finished_status(job_id, result)
    assert (outcome.state, outcome.outcome) == (JobState.FAILED, Outcome.REFUSED)
    assert (
        "🙅 **Not started.** The repository's daily budget of $5.00 has $3.00 spent or reserved "
        "this day, and this job may spend up to $4.00. It resets at " in shown
    )
    events, job = stored(job_id)
    assert [e.kind for e in events] == ["stop"]
    assert job["error"].endswith("00:00 UTC.")


def test_a_repositorys_config_lowers_its_cap_and_a_higher_one_is_ignored(
    agent_env: AgentEnv,
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caps(monkeypatch, repo_daily_usd="10")
    spent_earlier(0.5)
    lower = make_repo(tmp_path / "lower", {".resolver/config.yml": "budget:\n  daily_usd: 0.75\n"})
    result = session(started_job(), lower)
    assert result.agent.summary.startswith(
        "The repository's daily budget of $0.75 has $0.50 spent or reserved this day, "
        "and this job may spend up to $0.75."
    )
    higher = make_repo(
        tmp_path / "higher", {".resolver/config.yml": "budget:\n  daily_usd: 1000\n"}
    )
    spent_earlier(7.0)
    result = session(started_job(), higher)
    assert "daily budget of $10.00 has $7.50 spent or reserved" in result.agent.summary
    assert llm_server.requests == []


def test_a_bad_budget_in_the_repository_config_is_refused_clearly(
    agent_env: AgentEnv, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_repo(tmp_path / "bad", {".resolver/config.yml": "budget:\n  daily_usd: lots\n"})
    result = session(started_job(), repo)
    assert result.agent.summary == (
        "budget.daily_usd in .resolver/config.yml must be a positive number"
    )
    assert llm_server.requests == []


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_running_job_that_crosses_a_cap_stops_at_its_next_step(
    agent_env: AgentEnv,
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caps(monkeypatch, requester_daily_usd="1")

    def spend_elsewhere_then_think(request: dict[str, Any]) -> Reply:
        # While this job runs, another of the requester's (started before any budget was
        # set, so it holds no reservation) spends $0.90.
        if len(llm_server.requests) == 1:
            spent_earlier(0.9)
        return thinking(request)

    llm_server.set_script(spend_elsewhere_then_think)
    job_id = started_job()
    result = session(job_id, make_repo(tmp_path / "r", {"a.txt": "a\n"}))
    assert len(llm_server.requests) == 1
    assert result.agent.stop_reason and result.agent.stop_reason.startswith("budget: ")
    assert result.agent.summary.startswith(
        f"Stopped: the requester's daily budget of $1.00 is spent (${0.9 + CALL_COST:.2f} this "
        "day). It resets at "
    )
    assert result.agent.summary.endswith("UTC. Nothing unfinished was pushed.")
    events, job = stored(job_id)
    [stop] = of_kind(events, "stop")
    assert stop["message"] == result.agent.summary
    assert job["cost_usd"] == pytest.approx(CALL_COST)
