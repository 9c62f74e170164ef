"""The buttons: stop a job, run it again, run a schedule now. Each is a POST that carries the
session's CSRF token, checks who may, records what it did, and says so in the page (and, for
jobs, in the job's status message)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.broker.outbox import publish_job
from resolver.callbacks import record
from resolver.contract.signin import ForgeUnreachableError, SignInError
from resolver.contract.triggers import SenderRef, dump_trigger, read_trigger
from resolver.core.logs import log
from resolver.core.states import JobState, is_terminal
from resolver.store import accounts, conversations, jobs
from resolver.store.models import Job
from resolver.web.access import Viewer, can_act
from resolver.web.context import (
    current_viewer,
    in_transaction,
    not_found,
    signed_out,
    to_signin,
    web_of,
)
from resolver.web.inputs import route_of
from resolver.web.pages import load_visible_job
from resolver.web.session import csrf_ok

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Done:
    """Where to go after a button, what to tell the viewer there, and what to publish."""

    path: str
    message: str
    callbacks: list[int] = field(default_factory=list)


async def checked_viewer(request: Request) -> Viewer | Response:
    """The viewer behind a valid form post, or the answer to give instead."""
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    form = await request.form()
    if not csrf_ok(request, form.get("csrf")):
        log(logger, logging.WARNING, "web.csrf_refused", route=route_of(request))
        return Response("This form has expired; reload the page and try again.", status_code=403)
    return viewer


NOT_YOURS = (
    "Only the person who asked for this job, or someone who can push to its repository, may {verb}."
)


def _back(request: Request, path: str, message: str) -> Response:
    request.session["flash"] = message
    return RedirectResponse(path, status_code=303)


async def stop(request: Request) -> Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    viewer, web = checked, web_of(request)

    def act(session: Session) -> Done | None:
        job = load_visible_job(session, request, viewer)
        if job is None:
            return None
        here = f"/jobs/{job.id}"
        if not can_act(viewer, job, web.cache, web.settings):
            return Done(here, NOT_YOURS.format(verb="stop it"))
        callbacks = record.stop_job(session, job, viewer.person.login, viewer.account)
        if callbacks is None:  # a worker may have recorded its end since the job was read
            return Done(here, f"Job {job.id} has already ended ({job.state}).")
        ended = job.state == JobState.CANCELLED
        text = "Stopped." if ended else "Stopping: the job stops at its next step."
        return Done(here, text, callbacks)

    return await _finish(request, viewer, act)


async def rerun(request: Request) -> Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    viewer, web = checked, web_of(request)

    def act(session: Session) -> Done | None:
        job = load_visible_job(session, request, viewer)
        if job is None:
            return None
        here = f"/jobs/{job.id}"
        if not can_act(viewer, job, web.cache, web.settings):
            return Done(here, NOT_YOURS.format(verb="run it again"))
        if not is_terminal(JobState(job.state)) or job.source == "schedule":
            return Done(here, "This job cannot be run again from here.")
        if viewer.user_id is None:
            return Done(here, link_first(viewer, web.settings.bot_name))
        conversations.hold_reruns(session, job.id)
        running = conversations.active_rerun(session, job, viewer.user_id)
        if running is not None:  # pressed twice (a double click, two tabs): one run counts
            return Done(f"/jobs/{running.id}", _already_again(job.id, running))
        new = jobs.create_job(session, again(session, job, viewer))
        callbacks = record.record_status(session, new)
        session.commit()
        _publish(session, new.id)
        log(
            logger,
            logging.INFO,
            "web.rerun",
            job=job.id,
            new_job=new.id,
            by=viewer.label,
            user=viewer.user_id,
        )
        return Done(f"/jobs/{new.id}", f"Running job {job.id}'s request again.", callbacks)

    return await _finish(request, viewer, act)


def _already_again(job_id: int, running: Job) -> str:
    return (
        f"You already ran job {job_id} again: job {running.id} is {running.state}. "
        "Nothing new was started; run it again once that one has ended."
    )


def _publish(session: Session, job_id: int) -> None:
    try:
        publish_job(session, job_id)
    except Exception as error:  # the row is committed: the reconciler publishes it later
        log(logger, logging.WARNING, "web.publish_failed", job=job_id, error=repr(error))


def link_first(viewer: Viewer, bot_name: str) -> str:
    """What a viewer with no Resolver user is told instead of running anything: a job needs
    someone whose budget, permission and token it uses."""
    found = registry.find(viewer.person.provider)
    name = found.display_name if found is not None else viewer.person.provider
    return (
        f"Link your {name} account to Resolver first: mention @{bot_name} where it works and "
        "open the link in its reply (your accounts are on /me). Nothing ran."
    )


def again(session: Session, job: Job, viewer: Viewer) -> jobs.NewJob:
    """The same request as `job`, asked again by `viewer`, who has a Resolver user: they are
    its requester and its sender, so its budget, the permission check and the forge token are
    theirs. Nothing of the first requester is kept; where the viewer has no account on the
    job's source, the new job has no sender and the permission check uses their own account
    on the forge."""
    assert viewer.user_id is not None and viewer.name is not None
    first = read_trigger(job.trigger)
    sender = _sender_of(session, viewer, job.source)
    origin = first.origin.model_copy(update={"sender": sender, "rerun_of": job.id})
    trigger = first.model_copy(update={"origin": origin, "planned": None})
    return jobs.NewJob(
        source=job.source,
        task=job.task,
        repo=job.repo,
        requester=(sender.login if sender else None) or viewer.name,
        requester_id=viewer.user_id,
        trigger=dump_trigger(trigger),
        conversation_key=job.conversation_key,
    )


def _sender_of(session: Session, viewer: Viewer, source: str) -> SenderRef | None:
    """The viewer's own account on `source`, as intake records a sender: the one they signed
    in with, else one linked to their user."""
    person = viewer.person
    if person.provider == source:
        return SenderRef(id=person.external_id, login=person.login)
    assert viewer.user_id is not None
    identity = accounts.identity_of(session, viewer.user_id, source)
    if identity is None:
        return None
    return SenderRef(id=identity.external_id, login=identity.login)


async def _finish(
    request: Request, viewer: Viewer, act: Callable[[Session], Done | None]
) -> Response:
    try:
        done = await in_transaction(act)
    except SignInError:
        return await signed_out(request)
    except ForgeUnreachableError as error:
        return _back(request, request.url.path.rsplit("/", 1)[0], f"{error}; nothing changed.")
    if done is None:
        return not_found(request, viewer)
    record.publish_all(done.callbacks)
    log(logger, logging.INFO, "web.action", route=route_of(request), by=viewer.label)
    return _back(request, done.path, done.message)
