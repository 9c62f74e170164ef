"""Two beat processes tick against the same database and Redis at the same moments: every due
slot gets one run, and every run one job."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from resolver.contract.triggers import ScheduleRun, read_trigger
from resolver.store.db import session_scope
from resolver.store.models import ScheduleRepo
from tests.conftest import ResolverEnv
from tests.schedules.helpers import make_schedule, runs_of, schedule_jobs
from tests.support.procs import ROOT

START = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)
MINUTES = 6
SCHEDULES = 3

# One beat process: once both are up, tick once a minute of the schedules' clock, in step
# with the other (a file each per minute), as two beats share the wall clock. The jobs it
# starts end at once, as if a fast worker ran them, so no run waits for a limit.
BEAT = """
import json, sys, time
from datetime import datetime, timedelta
from pathlib import Path
from sqlalchemy import update
from resolver.store.db import session_scope
from resolver.store.models import Job
from resolver.core.settings import get_settings
from resolver.schedules.queue import tick
from resolver import tasks  # the Celery root, where the tick runs: it says where settings are
ready, start, minutes = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
started = []
for minute in range(minutes):
    ready.with_suffix(f".{minute}").touch()
    deadline = time.monotonic() + 60
    while len(list(ready.parent.glob(f"*.{minute}"))) < 2:
        if time.monotonic() > deadline:
            sys.exit("the other beat never came")
        time.sleep(0.005)
    jobs = tick(get_settings(), datetime.fromisoformat(start) + timedelta(minutes=minute))
    with session_scope() as session:
        session.execute(update(Job).where(Job.id.in_(jobs)).values(state="succeeded"))
    started += jobs
print(json.dumps(started))
"""


def beat(env: ResolverEnv, name: str) -> subprocess.Popen[str]:
    steps = env.tmp / "steps"
    steps.mkdir(exist_ok=True)
    args = [str(steps / name), START.isoformat(), str(MINUTES)]
    return subprocess.Popen(
        [sys.executable, "-c", BEAT, *args],
        env=env.child_env(PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_beats_record_each_slot_once_and_start_it_once(
    resolver_env: ResolverEnv, backend: str
) -> None:
    schedules = [
        make_schedule(f"every-minute-{n}", cron="* * * * *", created_at=START - timedelta(hours=1))
        for n in range(SCHEDULES)
    ]
    with session_scope() as session:
        session.execute(update(ScheduleRepo).values(concurrent_runs=SCHEDULES, runs_per_hour=100))
    beats = [beat(resolver_env, "one"), beat(resolver_env, "two")]
    outputs = [b.communicate(timeout=120)[0] for b in beats]
    assert all(b.returncode == 0 for b in beats)
    started = [job for out in outputs for job in json.loads(out.strip().splitlines()[-1])]

    slots = [START + timedelta(minutes=m) for m in range(MINUTES)]
    for schedule in schedules:
        runs = runs_of(schedule)
        assert [run.due_at for run in runs] == slots
        assert all(run.state == "started" for run in runs)
    jobs = schedule_jobs()
    assert sorted(started) == sorted(job.id for job in jobs)  # each job started by one beat
    assert sorted(_run_id(job.trigger) for job in jobs) == sorted(
        run.id for schedule in schedules for run in runs_of(schedule)
    )


def _run_id(stored: dict[str, object]) -> int | None:
    trigger = read_trigger(stored)
    return trigger.run_id if isinstance(trigger, ScheduleRun) else None
