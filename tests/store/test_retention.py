"""Retention prunes the trajectories of finished jobs older than RESOLVER_RETENTION_DAYS, in
batches, and keeps their rows, outcomes, costs and links; running and recent jobs keep all."""

from datetime import UTC, datetime, timedelta

from prometheus_client import REGISTRY
from sqlalchemy import select, update

from resolver.store import jobs, retention
from resolver.store.db import session_scope
from resolver.store.models import Job, JobEvent
from tests.conftest import reset_caches


def _job(state: str, days_old: float, steps: int = 3) -> int:
    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source="github", task="fix", repo="o/r"))
        job.state = state
        job.outcome = "changed_code" if state == "succeeded" else None
        job.cost_usd = 0.25
        job.pr_url = "https://forge.example/o/r/pull/7"
        for seq in range(1, steps + 1):
            session.add(JobEvent(job_id=job.id, seq=seq, kind="tool", payload={"out": "x" * 99}))
        job_id = job.id
    with session_scope() as session:
        old = datetime.now(UTC) - timedelta(days=days_old)
        session.execute(update(Job).where(Job.id == job_id).values(updated_at=old))
    return job_id


def _kinds(job_id: int) -> list[str]:
    with session_scope() as session:
        rows = session.scalars(select(JobEvent.kind).where(JobEvent.job_id == job_id))
        return sorted(rows)


def _pruned_jobs_metric() -> float:
    return REGISTRY.get_sample_value("resolver_retention_pruned_jobs_total") or 0.0


def test_old_finished_trajectories_go_in_batches_and_the_rows_stay(
    resolver_env, backend, monkeypatch
) -> None:
    from resolver import tasks

    old = [_job("succeeded", 40), _job("failed", 40), _job("cancelled", 31)]
    running = _job("running", 40)
    recent = _job("succeeded", 5)
    before = _pruned_jobs_metric()

    assert tasks.prune_trajectories() == 0, "unset: keep everything"
    assert _kinds(old[0]) == ["tool"] * 3

    monkeypatch.setenv("RESOLVER_RETENTION_DAYS", "30")
    reset_caches()
    assert tasks.prune_all(30, batch=2, budget=60) == 3
    for job_id in old:
        assert _kinds(job_id) == [retention.PRUNED]
    assert _kinds(running) == ["tool"] * 3 and _kinds(recent) == ["tool"] * 3
    assert _pruned_jobs_metric() - before == 3
    with session_scope() as session:
        kept = session.get(Job, old[0])
        assert kept is not None
        assert (kept.outcome, kept.cost_usd, kept.pr_url) == (
            "changed_code",
            0.25,
            "https://forge.example/o/r/pull/7",
        )
        assert retention.pending(session, retention.cutoff(datetime.now(UTC), 30)) == 0
    assert tasks.prune_all(30, batch=2, budget=60) == 0, "a second run finds nothing"
