"""Two beat processes tick against the same database and Redis at the same moments: every due
slot gets one run, and every started run one job."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from resolver.db import session_scope
from resolver.models import ScheduleRepo
from tests.conftest import ResolverEnv
from tests.foundation.procs import ROOT, wait_until
from tests.schedules.helpers import make_schedule, runs_of, schedule_jobs

START = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)
MINUTES = 6
SCHEDULES = 3

# One beat process: wait for the signal, then tick once a minute of the schedule's clock.
BEAT = """
import json, sys, time
from datetime import datetime, timedelta
from pathlib import Path
from resolver.schedules.queue import tick
ready, go, start, minutes = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ready.touch()
while not go.exists():
    time.sleep(0.01)
started = []
for minute in range(minutes):
    started += tick(datetime.fromisoformat(start) + timedelta(minutes=minute))
print(json.dumps(started))
"""


def beat(env: ResolverEnv, name: str) -> subprocess.Popen[str]:
    args = [str(env.tmp / f"{name}.ready"), str(env.tmp / "go"), START.isoformat(), str(MINUTES)]
    return subprocess.Popen(
        [sys.executable, "-c", BEAT, *args],
        env=env.child_env(PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_beats_record_each_slot_once_and_start_each_run_once(
    resolver_env: ResolverEnv, backend: str
) -> None:
    schedules = [
        make_schedule(f"every-minute-{n}", cron="* * * * *", created_at=START - timedelta(hours=1))
        for n in range(SCHEDULES)
    ]
    with session_scope() as session:
        session.execute(update(ScheduleRepo).values(concurrent_runs=3, runs_per_hour=100))
    beats = [beat(resolver_env, "one"), beat(resolver_env, "two")]
    ready = [resolver_env.tmp / f"{name}.ready" for name in ("one", "two")]
    wait_until(
        lambda: all(p.exists() for p in ready) or any(b.poll() is not None for b in beats),
        60,
        "both beats to start",
    )
    (resolver_env.tmp / "go").touch()
    outputs = [b.communicate(timeout=120)[0] for b in beats]
    assert all(b.returncode == 0 for b in beats)
    started = [job for out in outputs for job in json.loads(out.strip().splitlines()[-1])]

    slots = [START + timedelta(minutes=m) for m in range(MINUTES)]
    for schedule in schedules:
        assert [run.due_at for run in runs_of(schedule)] == slots
    jobs = schedule_jobs()
    assert sorted(started) == sorted(job.id for job in jobs)  # each job started by one beat
    assert len(jobs) == 3  # the repository's limit; the other runs wait, none is dropped
    run_ids = [job.trigger["run_id"] for job in jobs]
    assert len(set(run_ids)) == len(run_ids)
    waiting = [r for s in schedules for r in runs_of(s) if r.state == "waiting"]
    assert len(waiting) == SCHEDULES * MINUTES - 3
    assert {r.waiting_for for r in waiting} == {"the repository's limit of 3 runs at once"}
