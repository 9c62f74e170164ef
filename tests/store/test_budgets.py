"""The budgets' sums and reservations on the real databases, with real concurrent starts."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from resolver.core.budgets import Cap, Spent
from resolver.core.states import JobState, Outcome
from resolver.store import budgets, jobs
from resolver.store.db import session_scope
from resolver.store.models import utcnow
from tests.conftest import ResolverEnv

STARTERS = 6


def running_job(repo: str = "acme/app", requester: str = "ada") -> int:
    with session_scope() as session:
        job = jobs.create_job(
            session, jobs.NewJob(source="cli", task="t", repo=repo, requester=requester)
        )
        job_id = job.id
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, f"owner-{job_id}", 60)
    return job_id


def spend(job_id: int, usd: float | None, tokens: int, finished: bool = True) -> None:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        job.cost_usd, job.prompt_tokens, job.completion_tokens = usd, tokens, 0
        if finished:
            jobs.finish_job(session, job, JobState.SUCCEEDED, Outcome.ANSWERED)


def reserve(job_id: int, caps: tuple[Cap, ...], usd: float = 4.0, tokens: int = 1000) -> str | None:
    with session_scope() as session:
        refusal = budgets.reserve(session, job_id, caps, Spent(usd, tokens), utcnow())
    return None if refusal is None else refusal.message()


def test_two_jobs_starting_at_once_cannot_both_fit_into_room_for_one(
    resolver_env: ResolverEnv, backend: str
) -> None:
    # $10 a day, $3 spent: room for one $4 reservation (7 left), not two.
    caps = (Cap("repository", "usd", 10.0),)
    spend(running_job(), 3.0, 100)
    starters = [running_job() for _ in range(STARTERS)]
    gate = threading.Barrier(STARTERS)
    answers: dict[int, str | None] = {}

    def start(job_id: int) -> None:
        gate.wait()
        answers[job_id] = reserve(job_id, caps)

    threads = [threading.Thread(target=start, args=(job_id,)) for job_id in starters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    started = [job_id for job_id, refused in answers.items() if refused is None]
    assert len(started) == 1, answers
    refused = [message for message in answers.values() if message is not None]
    assert len(refused) == STARTERS - 1
    assert all(
        m and m.startswith("The repository's daily budget of $10.00 has $7.00") for m in refused
    )
    with session_scope() as session:
        held = [jobs.get_job(session, job_id).reserved_usd for job_id in starters]
    assert sorted(held, key=lambda v: v or 0) == [None] * (STARTERS - 1) + [4.0]


def test_a_finished_job_counts_what_it_spent_and_its_reservation_is_released(
    resolver_env: ResolverEnv, backend: str
) -> None:
    caps = (Cap("repository", "usd", 10.0), Cap("requester", "tokens", 50_000))
    first = running_job()
    assert reserve(first, caps) is None
    second = running_job()
    assert reserve(second, caps) is None
    third = running_job()
    refused = reserve(third, caps)
    assert refused and "$8.00 spent or reserved" in refused
    spend(first, 0.5, 20_000)  # finished: only what it spent counts now
    assert reserve(third, caps) is None
    fourth = running_job()
    refused = reserve(fourth, caps, usd=0.1, tokens=30_000)
    assert refused and refused.startswith("The requester's daily token budget of 50,000 tokens")


def test_other_repositories_requesters_and_earlier_periods_do_not_count(
    resolver_env: ResolverEnv, backend: str
) -> None:
    caps = (Cap("repository", "usd", 5.0), Cap("requester", "usd", 5.0))
    spend(running_job(repo="acme/other", requester="bob"), 9.0, 0)
    assert reserve(running_job(), caps) is None
    # A fixed calendar: yesterday's spend counts for the month, not for the day.
    now = datetime(2026, 3, 16, 9, tzinfo=UTC)
    earlier = running_job()
    spend(earlier, 9.0, 0)
    with session_scope() as session:
        jobs.get_job(session, earlier).started_at = datetime(2026, 3, 15, 23, tzinfo=UTC)
    late = running_job()
    with session_scope() as session:
        jobs.get_job(session, late).started_at = now
        assert budgets.reserve(session, late, caps, Spent(4.0, 0), now) is None
    with session_scope() as session:
        month = budgets.reserve(session, late, (Cap("service", "usd", 12.0),), Spent(4.0, 0), now)
    assert month is not None and month.spent == 9.0


def test_spend_against_each_cap_is_listed(resolver_env: ResolverEnv, backend: str) -> None:
    spend(running_job(repo="acme/app", requester="ada"), 1.25, 10)
    spend(running_job(repo="acme/web", requester="bob"), 2.0, 10)
    caps = (Cap("repository", "usd", 10.0), Cap("service", "usd", 100.0))
    with session_scope() as session:
        lines = budgets.overview(session, caps, utcnow())
    found = {(line.cap.scope, line.who): line.spent for line in lines}
    assert found == {
        ("repository", "acme/web"): 2.0,
        ("repository", "acme/app"): 1.25,
        ("service", "service"): pytest.approx(3.25),
    }
