"""`/schedules`: what each schedule does next and did last, seen by readers of its repository,
and why its repository's schedules file could not be read; "Run now" for those who may push
there."""

from __future__ import annotations

from resolver.schedules.store import FILE
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.models import Schedule
from tests.schedules.helpers import make_schedule, runs_of
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in


def test_readers_see_pushers_run_now(app, forge) -> None:
    schedule_id = make_schedule("weekly-tidy", SECRET_REPO, cron="0 6 * * 1", timezone="UTC")
    reader = browser(app)
    sign_in(reader, forge, "rita")
    page = reader.get("/schedules").text
    assert "weekly-tidy" in page and "next run 20" in page and ">Run now<" not in page
    refused = reader.post(f"/schedules/{schedule_id}/run", data={"csrf": csrf_of(reader, "/jobs")})
    assert "Only someone who can push" in reader.get(refused.headers["location"]).text
    assert runs_of(schedule_id) == []

    with session_scope() as session:  # Run now is recorded as the viewer's Resolver user
        accounts.add_user(session, "Wendy W")
        accounts.link_identity(session, "Wendy W", "github", str(forge.user_id("wendy")), "wendy")
    pusher = browser(app)
    sign_in(pusher, forge, "wendy")
    assert ">Run now<" in pusher.get("/schedules").text
    started = pusher.post(f"/schedules/{schedule_id}/run", data={"csrf": csrf_of(pusher, "/jobs")})
    assert started.status_code == 303
    assert "of weekly-tidy" in pusher.get("/schedules").text
    [run] = runs_of(schedule_id)
    assert run.reason == "manual" and run.requested_by == "Wendy W"


def test_strangers_see_no_schedule(app, forge) -> None:
    schedule_id = make_schedule("weekly-tidy", SECRET_REPO)
    stranger = browser(app)
    sign_in(stranger, forge, "nick")
    assert "weekly-tidy" not in stranger.get("/schedules").text
    token = csrf_of(stranger, "/jobs")
    assert stranger.post(f"/schedules/{schedule_id}/run", data={"csrf": token}).status_code == 404
    assert runs_of(schedule_id) == []


def test_readers_see_why_the_repositorys_schedules_file_could_not_be_read(app, forge) -> None:
    from_file = make_schedule("nightly", SECRET_REPO)
    make_schedule("weekly-tidy", SECRET_REPO)
    with session_scope() as session:
        schedule = session.get_one(Schedule, from_file)
        schedule.origin = FILE
        schedule.repository.sync_error = (
            "internal error: OSError (the worker's log has the details)"
        )
    reader = browser(app)
    sign_in(reader, forge, "rita")
    page = reader.get("/schedules").text
    assert page.count("could not be read") == 1  # on the file's schedule, not the service's
    assert "<pre>internal error: OSError (the worker&#39;s log has the details)</pre>" in page
