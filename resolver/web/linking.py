"""People link their own accounts: the link in an unlinked sender's notice, opened by that
same person signed in with that same forge account, links it and runs the request that
prompted the notice (once, if it is recent). `/me` lists their identities and unlinks one."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.broker.outbox import publish_job
from resolver.callbacks import record
from resolver.contract.outbound import REACT
from resolver.core.logs import log
from resolver.ingress.links import LinkClaim, LinkError, read_link
from resolver.store import accounts, jobs, notices
from resolver.store.callbacks import record_callback
from resolver.store.db import session_scope
from resolver.store.models import Notice, utcnow
from resolver.store.secrets import save_oauth_token, token_state
from resolver.store.vault import Vault
from resolver.web.access import Viewer
from resolver.web.actions import checked_viewer
from resolver.web.context import current_viewer, page, to_signin, web_of
from resolver.web.session import take_grant

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def _display(provider: str) -> str:
    found = registry.find(provider)
    return found.display_name if found is not None else provider


def _mismatch(claim: LinkClaim, viewer: Viewer) -> str | None:
    """Why this viewer may not use the link: it names another account than theirs."""
    same = (viewer.person.provider, viewer.person.external_id) == (
        claim.provider,
        claim.external_id,
    )
    if same:
        return None
    expected = f"@{claim.login}" if claim.login else f"account {claim.external_id}"
    return (
        f"This link is for the {_display(claim.provider)} account {expected}, and you are "
        f"signed in as @{viewer.person.login} on {_display(viewer.person.provider)}. Sign out, "
        f"then open the link again and sign in as {expected}."
    )


def _claim(request: Request) -> LinkClaim | str:
    try:
        return read_link(web_of(request).settings, str(request.path_params["token"]))
    except LinkError as error:
        return str(error)


async def link_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    claim = _claim(request)
    if isinstance(claim, str):
        return page(request, "link.html", viewer, status_code=403, problem=claim)
    problem = _mismatch(claim, viewer)
    if problem is not None:
        return page(request, "link.html", viewer, status_code=403, problem=problem)
    return page(request, "link.html", viewer, claim=claim, display=_display(claim.provider))


async def link(request: Request) -> Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    viewer, claim = checked, _claim(request)
    problem = claim if isinstance(claim, str) else _mismatch(claim, viewer)
    if problem is not None or isinstance(claim, str):
        return page(request, "link.html", viewer, status_code=403, problem=problem)
    settings = web_of(request).settings
    grant = take_grant(request, settings)

    def act() -> tuple[int | None, list[int]]:
        with session_scope() as session:
            user = accounts.self_link(
                session, claim.provider, claim.external_id, viewer.person.login
            )
            signed = viewer.person
            accounts.signed_in(session, signed.provider, signed.external_id)
            if grant is not None:  # the forge token they signed in with (whatever the link names)
                vault = Vault(settings.fernet_keys)
                save_oauth_token(session, vault, signed.provider, user.id, *grant)
            since = utcnow() - timedelta(seconds=settings.linked_request_seconds)
            waiting = notices.waiting_request(session, claim.provider, claim.external_id, since)
            job_id, callbacks = (None, []) if waiting is None else _run(session, waiting, user)
            session.commit()
            if job_id is not None:
                publish_job(session, job_id)
            return job_id, callbacks

    job_id, callbacks = await run_in_threadpool(act)
    record.publish_all(callbacks)
    log(logger, logging.INFO, "web.self_linked", provider=claim.provider, job=job_id)
    message = "Your account is linked."
    if job_id is not None:
        message += f" Your request is running as job {job_id}."
        request.session["flash"] = message
        return RedirectResponse(f"/jobs/{job_id}", status_code=303)
    request.session["flash"] = message
    return RedirectResponse("/me", status_code=303)


def _run(session: Session, notice: Notice, user: Any) -> tuple[int | None, list[int]]:
    """The notice's request as a job of `user`, acknowledged as intake would; once."""
    context = dict(notice.context or {})
    asked = context.pop("request", None)
    if not isinstance(asked, dict) or not asked.get("task"):
        return None, []
    found = context.get("sender")
    sender = found if isinstance(found, dict) else {}
    attempt = session.begin_nested()  # undone alone if another request ran it first
    new = jobs.create_job(
        session,
        jobs.NewJob(
            source=notice.provider,
            task=str(asked["task"]),
            repo=asked.get("repo"),
            requester=str(sender.get("login") or user.name),
            requester_id=user.id,
            trigger=context,
            conversation_key=notice.conversation_key,
        ),
    )
    if not notices.claim_request(session, notice.id, new.id):
        attempt.rollback()
        return None, []
    attempt.commit()
    react = record_callback(session, notice.provider, REACT, {"job_id": new.id}, new.id)
    return new.id, [react.id, *record.record_status(session, new)]


async def me_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)

    def load() -> tuple[list[Any], dict[str, str]]:
        if viewer.user_id is None:
            return [], {}
        with session_scope() as session:
            found = accounts.identities(session, viewer.user_id)
            now = utcnow()
            tokens = {
                provider: token_state(credential, now)
                for (_, provider), credential in accounts.newest_user_tokens(
                    session, viewer.user_id
                ).items()
            }
            session.expunge_all()
            return found, tokens

    linked, tokens = await run_in_threadpool(load)
    return page(request, "me.html", viewer, identities=linked, tokens=tokens, display=_display)


async def unlink(request: Request) -> Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    viewer = checked
    raw = str(request.path_params["identity_id"])

    def act() -> str | None:
        if viewer.user_id is None or not raw.isdigit():
            return None
        with session_scope() as session:
            gone = accounts.unlink(session, viewer.user_id, int(raw))
            return None if gone is None else f"{_display(gone.provider)} {gone.login or ''}"

    gone = await run_in_threadpool(act)
    request.session["flash"] = f"Unlinked {gone.strip()}." if gone else "Nothing was unlinked."
    return RedirectResponse("/me", status_code=303)
