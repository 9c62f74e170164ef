"""Due runs are recorded once per (schedule, due time) and started within the limits, on
SQLite and PostgreSQL; over-limit runs wait, say why, and start later."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from resolver.contract.triggers import ScheduleRun, read_trigger
from resolver.core.settings import get_settings
from resolver.core.states import JobState
from resolver.schedules import asked, queue
from resolver.schedules.history import history
from resolver.schedules.spec import ScheduleError, build_spec, parse_file
from resolver.schedules.store import (
    ScheduleNotFoundError,
    apply_file,
    find_schedule,
    remove_schedule,
    repository,
)
from resolver.store.db import session_scope
from resolver.store.models import Job, Schedule, ScheduleRepo
from tests.conftest import ResolverEnv
from tests.schedules.helpers import get_schedule, make_schedule, runs_of, schedule_jobs

MONDAY_0600_BERLIN = datetime(2024, 3, 25, 5, tzinfo=UTC)
NEXT_MONDAY_0600_BERLIN = datetime(2024, 4, 1, 4, tzinfo=UTC)  # summer time since Sunday
LONG_AGO = datetime(2024, 1, 1, tzinfo=UTC)


def tick(now: datetime) -> list[int]:
    with session_scope() as session:
        queue.record_due(session, now)
    with session_scope() as session:
        return queue.start_waiting(session, now, get_settings())


def finish(job_id: int) -> None:
    with session_scope() as session:
        session.execute(update(Job).where(Job.id == job_id).values(state=JobState.SUCCEEDED))


def test_a_missed_run_is_caught_up_once_then_the_next_slot_waits_its_turn(
    resolver_env: ResolverEnv, backend: str
) -> None:
    schedule = make_schedule("weekly", created_at=LONG_AGO)
    back_up = MONDAY_0600_BERLIN + timedelta(days=1)  # twelve Mondays were missed
    started = tick(back_up)
    assert tick(back_up + timedelta(minutes=1)) == []
    [run] = runs_of(schedule)
    assert (run.due_at, run.reason, run.state) == (MONDAY_0600_BERLIN, "cron", "started")
    [job] = schedule_jobs()
    assert started == [job.id] and run.job_id == job.id
    trigger = read_trigger(job.trigger)
    assert (
        isinstance(trigger, ScheduleRun)
        and trigger.schedule_id == schedule
        and job.conversation_key == f"schedule:{schedule}"
    )
    finish(job.id)
    assert tick(NEXT_MONDAY_0600_BERLIN - timedelta(seconds=1)) == []
    assert len(tick(NEXT_MONDAY_0600_BERLIN)) == 1
    assert [r.due_at for r in runs_of(schedule)] == [MONDAY_0600_BERLIN, NEXT_MONDAY_0600_BERLIN]


def test_a_new_schedule_does_not_run_for_slots_before_it_existed(resolver_env: ResolverEnv) -> None:
    schedule = make_schedule("weekly", created_at=MONDAY_0600_BERLIN + timedelta(hours=1))
    assert tick(MONDAY_0600_BERLIN + timedelta(days=1)) == []
    assert runs_of(schedule) == []


def test_the_same_slot_is_recorded_once_however_often_it_is_recorded(
    resolver_env: ResolverEnv, backend: str
) -> None:
    schedule = make_schedule("weekly", created_at=LONG_AGO)
    with session_scope() as session:
        first = queue.insert_run(session, schedule, MONDAY_0600_BERLIN, "cron")
    with session_scope() as session:
        again = queue.insert_run(session, schedule, MONDAY_0600_BERLIN, "cron")
    assert first is not None and again is None
    # A beat that restarted without `last_due_at` (rolled back) finds the slot taken.
    with session_scope() as session:
        session.execute(update(Schedule).values(last_due_at=None))
    tick(MONDAY_0600_BERLIN + timedelta(hours=1))
    assert len(runs_of(schedule)) == 1


def test_a_cron_run_waiting_for_a_limit_covers_the_slots_after_it(
    resolver_env: ResolverEnv,
) -> None:
    hourly = make_schedule("hourly", cron="0 * * * *", created_at=LONG_AGO)
    busy = make_schedule("busy", cron="0 * * * *", created_at=LONG_AGO)
    with session_scope() as session:
        session.execute(update(Schedule).where(Schedule.id == busy).values(enabled=False))
    [running] = tick(MONDAY_0600_BERLIN)  # the repository's one run at a time
    for hours in (1, 2, 3):
        tick(MONDAY_0600_BERLIN + timedelta(hours=hours))
    assert [r.state for r in runs_of(hourly)] == ["started", "waiting"]
    # a person's request is its own run
    asked.run_now("hourly", None, queue.MANUAL, "cli", get_settings())
    assert [r.reason for r in runs_of(hourly)] == ["cron", "cron", "manual"]
    finish(running)
    [next_job] = tick(MONDAY_0600_BERLIN + timedelta(hours=3, minutes=1))
    assert runs_of(hourly)[1].job_id == next_job


def test_runs_over_the_repositorys_limits_wait_and_say_which_limit(
    resolver_env: ResolverEnv, backend: str
) -> None:
    first = make_schedule("first", created_at=LONG_AGO)
    second = make_schedule("second", created_at=LONG_AGO)
    with session_scope() as session:
        session.execute(update(ScheduleRepo).values(runs_per_hour=1, concurrent_runs=1))
    now = MONDAY_0600_BERLIN + timedelta(minutes=1)
    [job_id] = tick(now)
    [held] = runs_of(second)
    assert held.state == "waiting"
    assert held.waiting_for == "the repository's limit of 1 run at once"
    finish(job_id)
    assert tick(now + timedelta(minutes=1)) == []
    assert runs_of(second)[0].waiting_for == "the repository's limit of 1 run per hour"
    with session_scope() as session:
        assert history(session, get_schedule_row(session, second))[0].did == (
            "waiting for the repository's limit of 1 run per hour"
        )
    [later] = tick(now + timedelta(hours=1))
    assert runs_of(second)[0].job_id == later and runs_of(first)[0].job_id == job_id


def get_schedule_row(session: object, schedule_id: int) -> Schedule:
    found = session.get(Schedule, schedule_id)  # type: ignore[attr-defined]
    assert found is not None
    return found  # type: ignore[no-any-return]


def test_the_open_pull_request_limit_holds_new_proposals_but_not_updates(
    resolver_env: ResolverEnv,
) -> None:
    proposing = make_schedule("proposing", created_at=LONG_AGO)
    updating = make_schedule("updating", created_at=LONG_AGO)
    with session_scope() as session:
        session.execute(update(ScheduleRepo).values(open_prs=1, concurrent_runs=5))
        session.execute(
            update(Schedule)
            .where(Schedule.id == updating)
            .values(pull_state="open", pull_branch="b")
        )
    tick(MONDAY_0600_BERLIN + timedelta(minutes=1))
    assert runs_of(updating)[0].state == "started"
    assert runs_of(proposing)[0].waiting_for == "the repository's limit of 1 open pull request"


def test_a_pull_request_a_person_closed_no_longer_counts_toward_the_limit(
    resolver_env: ResolverEnv, backend: str
) -> None:
    """The `pull_request` event that closed it (kept in store.bot_pulls) frees the slot at once,
    not when the schedule runs again."""
    from resolver.contract.pulls import PullChange
    from resolver.store import bot_pulls

    proposing = make_schedule("proposing", created_at=LONG_AGO)
    closed = make_schedule("closed", created_at=LONG_AGO, cron="0 6 * * 2")
    with session_scope() as session:
        session.execute(update(ScheduleRepo).values(open_prs=1, concurrent_runs=5))
        session.execute(
            update(Schedule)
            .where(Schedule.id == closed)
            .values(pull_state="open", pull_branch="resolver/schedule-closed")
        )
        change = PullChange("octo/widgets", 9, "resolver/schedule-closed", "main", open=False)
        bot_pulls.apply(session, "github", change)
    tick(MONDAY_0600_BERLIN + timedelta(minutes=1))
    assert runs_of(proposing)[0].state == "started"


def test_the_services_limits_apply_across_repositories(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver.core.settings import get_settings

    monkeypatch.setenv("RESOLVER_SCHEDULE_CONCURRENT_RUNS", "1")
    get_settings.cache_clear()
    make_schedule("a", "octo/one", created_at=LONG_AGO)
    other = make_schedule("b", "octo/two", created_at=LONG_AGO)
    assert len(tick(MONDAY_0600_BERLIN + timedelta(minutes=1))) == 1
    assert runs_of(other)[0].waiting_for == "the service's limit of 1 run at once"


def test_run_now_starts_a_run_or_says_what_it_waits_for(resolver_env: ResolverEnv) -> None:
    make_schedule("nightly")
    started = asked.run_now("nightly", None, queue.MANUAL, "cli", get_settings())
    assert started.job_id is not None and started.waiting_for is None
    held = asked.run_now("nightly", "github:octo/widgets", queue.MANUAL, "cli", get_settings())
    assert held.job_id is None
    assert held.waiting_for == "the repository's limit of 1 run at once"
    with pytest.raises(ScheduleNotFoundError):
        asked.run_now("nightly", "octo/other", queue.MANUAL, "cli", get_settings())


def test_run_now_once_answers_with_the_run_its_requester_asked_for_while_it_waits_or_runs(
    resolver_env: ResolverEnv,
) -> None:
    """A button's press (`once`): a run the same person asked for that still waits or runs is
    the answer; someone else's press records a run of their own."""
    schedule_id = make_schedule("nightly")

    def press(by: str) -> asked.Requested:
        return asked.run_now("nightly", None, queue.MANUAL, by, get_settings(), once=True)

    wendy = press("Wendy W")
    assert not wendy.already and wendy.job_id is not None
    assert press("Wendy W") == replace(wendy, already=True)
    ada = press("Ada")
    assert not ada.already and ada.job_id is None
    assert press("Ada") == replace(ada, already=True)
    assert [run.id for run in runs_of(schedule_id)] == [wendy.run_id, ada.run_id]


def test_a_comment_asking_for_an_unknown_schedule_is_told_the_known_ones(
    resolver_env: ResolverEnv,
) -> None:
    make_schedule("weekly-deps")
    make_schedule("lint")
    text = asked.answer_run_request("github:octo/widgets", "tests", "alice", get_settings())
    assert "no schedule named `tests`" in text and "`lint`, `weekly-deps`" in text
    text = asked.answer_run_request("github:octo/widgets", "lint", "alice", get_settings())
    assert text.startswith("Started a run of schedule `lint`")


def test_names_are_unique_per_repository_and_found_across_them(resolver_env: ResolverEnv) -> None:
    make_schedule("weekly")
    with pytest.raises(ScheduleError, match="already has"):
        make_schedule("weekly")
    make_schedule("weekly", "gitlab:grp/app")
    with session_scope() as session, pytest.raises(ScheduleError, match="several"):
        find_schedule(session, "weekly")
    with session_scope() as session:
        assert (
            find_schedule(session, "weekly", "gitlab:grp/app").repository.repo == "gitlab:grp/app"
        )


FILE = """
limits: {open_prs: 2}
schedules:
  - {name: deps, cron: "0 6 * * 1", task: update-dependencies}
  - {name: lint, cron: "0 7 * * 5", prompt: Tidy the lint warnings.}
"""


def test_the_repository_file_adds_updates_and_disables_its_schedules(
    resolver_env: ResolverEnv,
) -> None:
    make_schedule("lint")  # the service's own: the file cannot take its name
    with session_scope() as session:
        repo = repository(session, "octo/widgets")
        changes = apply_file(session, repo, parse_file(FILE))
        ignored = "ignored lint: the service has a schedule of that name"
        assert changes == ["added deps", ignored]
        assert repo.file_limits == {"open_prs": 2} and repo.synced_at is not None
    with session_scope() as session:
        repo = repository(session, "octo/widgets")
        assert apply_file(session, repo, parse_file(FILE)) == [ignored]
        changed = FILE.replace("0 6 * * 1", "0 5 * * 1")
        assert apply_file(session, repo, parse_file(changed)) == ["updated deps", ignored]
        assert apply_file(session, repo, parse_file("schedules: []")) == ["disabled deps"]
    with session_scope() as session:
        deps = find_schedule(session, "deps")
        assert (deps.enabled, deps.cron, deps.origin) == (False, "0 5 * * 1", "file")
        with pytest.raises(ScheduleError, match="remove it from that file"):
            remove_schedule(session, deps)


def test_changing_the_time_counts_from_now(resolver_env: ResolverEnv) -> None:
    from resolver.schedules.store import apply_spec

    schedule_id = make_schedule("weekly", created_at=LONG_AGO)
    with session_scope() as session:
        schedule = session.get(Schedule, schedule_id)
        assert schedule is not None
        apply_spec(schedule, build_spec({"name": "weekly", "cron": "@daily", "prompt": "x"}))
    assert get_schedule(schedule_id).last_due_at is not None
    assert tick(datetime.now(UTC)) == []
