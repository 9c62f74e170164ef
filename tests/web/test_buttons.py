"""Stop and Run again: each a POST with the session's CSRF token, allowed to the requester,
admins and whoever may push; the result shows in the page and in the job's status message."""

from __future__ import annotations

import base64
import json

from sqlalchemy import select

from integrations import registry
from integrations.github.auth import token_for_job
from resolver.contract.triggers import SenderRef, read_trigger
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import accounts, jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job
from resolver.store.vault import Vault, store_credential
from resolver.worker import plan, request
from tests.schedules.helpers import make_schedule, runs_of
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in

ADA_TOKEN = "ghp_ada_own_token_0000000000000000000000"


def _job(**overrides) -> int:
    return new_job(repo=SECRET_REPO, task="update the docs", **overrides)


def _state(job_id: int) -> tuple[str, dict]:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        return job.state, dict(job.result)


def _status_callbacks(job_id: int) -> list[Callback]:
    with session_scope() as session:
        query = select(Callback).where(Callback.job_id == job_id, Callback.action == "status")
        found = list(session.scalars(query))
        session.expunge_all()
        return found


def test_a_pusher_stops_a_queued_job_and_its_status_says_who(app, forge) -> None:
    job_id = _job()
    client = browser(app)
    sign_in(client, forge, "wendy")
    token = csrf_of(client, f"/jobs/{job_id}")
    stopped = client.post(f"/jobs/{job_id}/stop", data={"csrf": token})
    assert stopped.status_code == 303 and stopped.headers["location"] == f"/jobs/{job_id}"
    state, result = _state(job_id)
    assert state == "cancelled" and result["stopped_by"] == "wendy"
    assert result["stopped_by_account"] == f"github:id:{forge.user_id('wendy')}"
    page = client.get(f"/jobs/{job_id}").text
    assert "Stopped." in page and "wendy asked it to stop" in page
    assert _status_callbacks(job_id), "the status message is brought up to date"


def test_a_running_job_is_asked_to_stop_and_says_so(app, forge) -> None:
    job_id = _job()
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        jobs.transition(job, JobState.RUNNING)
    client = browser(app)
    sign_in(client, forge, "root")
    client.post(f"/jobs/{job_id}/stop", data={"csrf": csrf_of(client, f"/jobs/{job_id}")})
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        assert job.state == "running" and job.cancel_requested
        from resolver.callbacks import record, status

        assert "**Stopping**" in status.render(record.view_of(session, job, get_settings()))
        assert "root asked me to stop" in status.render(
            record.view_of(session, job, get_settings())
        )


def test_stop_from_the_page_also_ends_the_messages_waiting_to_steer_the_job(app, forge) -> None:
    from resolver.store import steering

    job_id, waiting_id = _job(), new_job(repo=SECRET_REPO, task="and rename it")
    with session_scope() as session:
        job, waiting = jobs.get_job(session, job_id), jobs.get_job(session, waiting_id)
        jobs.transition(job, JobState.RUNNING)
        steering.add_message(session, job, waiting)
    client = browser(app)
    sign_in(client, forge, "root")
    client.post(f"/jobs/{job_id}/stop", data={"csrf": csrf_of(client, f"/jobs/{job_id}")})
    assert _state(waiting_id)[0] == "cancelled", "it would otherwise run as a follow-up"
    assert _status_callbacks(waiting_id), "its own status message says so"


def test_a_reader_may_look_but_not_stop(app, forge) -> None:
    job_id = _job()
    client = browser(app)
    sign_in(client, forge, "rita")
    page = client.get(f"/jobs/{job_id}")
    assert page.status_code == 200 and ">Stop<" not in page.text
    token = csrf_of(client, "/jobs")
    refused = client.post(f"/jobs/{job_id}/stop", data={"csrf": token})
    assert refused.status_code == 303
    assert "may stop it" in client.get(refused.headers["location"]).text
    assert _state(job_id)[0] == "queued"


def test_every_post_needs_the_sessions_csrf_token(app, forge) -> None:
    job_id = _job()
    client = browser(app)
    sign_in(client, forge, "root")
    for path in (f"/jobs/{job_id}/stop", f"/jobs/{job_id}/rerun", "/signout", "/schedules/1/run"):
        assert client.post(path).status_code == 403, path
        assert client.post(path, data={"csrf": "guessed"}).status_code == 403, path
    other = browser(app)
    sign_in(other, forge, "wendy")
    foreign = csrf_of(other, "/jobs")  # a token from another session is no good either
    assert client.post(f"/jobs/{job_id}/stop", data={"csrf": foreign}).status_code == 403
    assert _state(job_id)[0] == "queued"
    assert client.get("/jobs").status_code == 200, "still signed in"


def test_a_tampered_session_is_no_session(app, forge) -> None:
    job_id = _job()
    client = browser(app)
    sign_in(client, forge, "nick")
    cookie = client.cookies["resolver_session"]
    payload, _, signature = cookie.partition(".")
    data = json.loads(base64.b64decode(payload))
    data["who"]["l"] = "root"  # claim to be the admin
    forged = base64.b64encode(json.dumps(data).encode()).decode() + "." + signature
    client.cookies.clear()
    client.cookies.set("resolver_session", forged)
    page = client.get(f"/jobs/{job_id}")
    assert page.status_code == 303 and page.headers["location"].startswith("/signin")
    client.cookies.clear()
    client.cookies.set("resolver_session", "garbage")
    assert client.get(f"/jobs/{job_id}").status_code == 303


def _linked(forge, login: str, name: str | None = None) -> int:
    """A Resolver user for the GitHub account `login` (named `name`); its id."""
    with session_scope() as session:
        user = accounts.add_user(session, name or login)
        accounts.link_identity(session, user.name, "github", str(forge.user_id(login)), login)
        return user.id


def _failed_job_of_ada(forge) -> int:
    """A failed job ada asked for on GitHub, with her stored token beside it."""
    ada = _linked(forge, "ada")
    with session_scope() as session:
        vault = Vault(get_settings().fernet_keys)
        store_credential(
            session, vault, provider="github", kind="pat", secret=ADA_TOKEN, user_id=ada
        )
    sender = {"id": str(forge.user_id("ada")), "login": "ada"}
    job_id = _job(
        requester="ada",
        requester_id=ada,
        conversation_key="github:octo/secret#5",
        trigger={"repo": SECRET_REPO, "number": 5, "sender": sender},
    )
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        jobs.finish_job(session, job, JobState.FAILED, Outcome.ERROR, error="boom")
    return job_id


def _jobs() -> int:
    with session_scope() as session:
        return len(list(session.scalars(select(Job.id))))


def test_run_again_by_another_pusher_is_theirs(app, forge) -> None:
    """wendy, who may push, runs ada's job again: the new job's requester, sender, permission
    check and token are wendy's, and nothing of ada's is used."""
    job_id = _failed_job_of_ada(forge)
    wendy = _linked(forge, "wendy", "Wendy W")
    client = browser(app)
    sign_in(client, forge, "wendy")  # stores the token she signed in with, as hers
    again = client.post(f"/jobs/{job_id}/rerun", data={"csrf": csrf_of(client, f"/jobs/{job_id}")})
    assert again.status_code == 303
    new_id = int(again.headers["location"].rsplit("/", 1)[1])
    with session_scope() as session:
        new = session.get(Job, new_id)
        assert new is not None and new.state == "queued" and new.task == "update the docs"
        assert read_trigger(new.trigger).origin.rerun_of == job_id
        assert new.conversation_key == "github:octo/secret#5"
        sender = read_trigger(new.trigger).origin.sender
        assert sender == SenderRef(id=str(forge.user_id("wendy")), login="wendy")
        assert (new.requester, new.requester_id) == ("wendy", wendy)
        assert new.message_id and new.published_at is not None
    with session_scope() as session:
        snapshot = request.load(session, new_id)
        github = registry.forge("github", snapshot.trigger, snapshot.requester_id, get_settings())
        checked = plan.check_permission(session, snapshot, github, "github", SECRET_REPO)
    assert (checked.external_id, checked.login) == (str(forge.user_id("wendy")), "wendy")
    token = token_for_job(snapshot.trigger, snapshot.requester_id, get_settings())
    assert token != ADA_TOKEN and forge.tokens[token] == "wendy"


def test_run_again_of_a_chat_request_checks_the_viewers_own_forge_account(app, forge) -> None:
    """A job asked for from Slack by ada, run again by wendy, who has no Slack account linked:
    the new job carries no sender, so the permission check asks about wendy's GitHub account."""
    ada = _linked(forge, "ada")
    slack_ada = {"id": "T1:U_ADA", "login": "ada"}
    job_id = _job(
        source="slack",
        requester="ada",
        requester_id=ada,
        trigger={"channel": "C1", "ts": "1.0", "sender": slack_ada},
    )
    with session_scope() as session:
        jobs.finish_job(session, jobs.get_job(session, job_id), JobState.FAILED, Outcome.ERROR)
    wendy = _linked(forge, "wendy")
    client = browser(app)
    sign_in(client, forge, "wendy")
    again = client.post(f"/jobs/{job_id}/rerun", data={"csrf": csrf_of(client, f"/jobs/{job_id}")})
    with session_scope() as session:
        snapshot = request.load(session, int(again.headers["location"].rsplit("/", 1)[1]))
        assert snapshot.trigger.origin.sender is None and snapshot.requester_id == wendy
        github = registry.forge("github", snapshot.trigger, snapshot.requester_id, get_settings())
        checked = plan.check_permission(session, snapshot, github, "github", SECRET_REPO)
    assert checked.external_id == str(forge.user_id("wendy"))


def test_a_viewer_with_no_resolver_user_is_told_to_link_first(app, forge) -> None:
    job_id = _failed_job_of_ada(forge)
    schedule_id = make_schedule("weekly-tidy", SECRET_REPO)
    before = _jobs()
    client = browser(app)
    sign_in(client, forge, "wendy")  # may push, and has no Resolver user
    token = csrf_of(client, f"/jobs/{job_id}")
    again = client.post(f"/jobs/{job_id}/rerun", data={"csrf": token})
    assert again.status_code == 303 and again.headers["location"] == f"/jobs/{job_id}"
    assert "Link your GitHub account to Resolver first" in client.get(f"/jobs/{job_id}").text
    now = client.post(f"/schedules/{schedule_id}/run", data={"csrf": token})
    assert "Link your GitHub account to Resolver first" in client.get(now.headers["location"]).text
    assert _jobs() == before and runs_of(schedule_id) == []


def test_the_new_job_says_what_it_reruns_and_cannot_be_run_again_yet(app, forge) -> None:
    job_id = _failed_job_of_ada(forge)
    _linked(forge, "wendy")
    client = browser(app)
    sign_in(client, forge, "wendy")
    again = client.post(f"/jobs/{job_id}/rerun", data={"csrf": csrf_of(client, f"/jobs/{job_id}")})
    new_id = int(again.headers["location"].rsplit("/", 1)[1])
    page = client.get(again.headers["location"]).text
    assert f"Running job {job_id}" in page and f'href="/jobs/{job_id}"' in page
    running = client.post(f"/jobs/{new_id}/rerun", data={"csrf": csrf_of(client, "/jobs")})
    assert "cannot be run again" in client.get(running.headers["location"]).text
