"""People link their own accounts: the link in an unlinked sender's notice, opened by that
person signed in with a forge, links it and runs the request that prompted the notice (once,
if it is recent). A forge's account is proven by signing in with it; a chat's or tracker's by
its own sign-in (`proofs`), unless the link was delivered privately. A link links once, and
the session's key rotates when it does. `/me` lists their identities and unlinks one."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.broker.outbox import publish_job
from resolver.callbacks import record
from resolver.contract.callbacks import Reaction
from resolver.contract.notices import NoticeContextError, read_notice_context
from resolver.contract.triggers import dump_trigger
from resolver.core.logs import log
from resolver.ingress.links import LinkClaim, LinkError, read_link
from resolver.store import accounts, jobs, notices, used_links, web_sessions
from resolver.store.callbacks import record_callback
from resolver.store.models import Notice, User, utcnow
from resolver.store.secrets import save_oauth_token, token_state
from resolver.store.vault import Vault
from resolver.web import proofs
from resolver.web.access import Viewer
from resolver.web.actions import checked_viewer
from resolver.web.context import current_viewer, in_transaction, not_found, page, to_signin, web_of
from resolver.web.inputs import path_id
from resolver.web.session import rekey, session_key, take_grant

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

USED = "This link was used already. If your account is still not linked, mention me again."


class LinkUsedError(Exception):
    """Another request used the link first."""


def _display(provider: str) -> str:
    found = registry.find(provider)
    return found.display_name if found is not None else provider


def _mismatch(claim: LinkClaim, viewer: Viewer) -> str | None:
    """Why this viewer may not use a forge's link: it names another account than theirs."""
    same = (viewer.person.provider, viewer.person.external_id) == (
        claim.provider,
        claim.external_id,
    )
    if same:
        return None
    expected = claim.account
    return (
        f"This link is for the {_display(claim.provider)} account {expected}, and you are "
        f"signed in as @{viewer.person.login} on {_display(viewer.person.provider)}. Sign out, "
        f"then open the link again and sign in as {expected}."
    )


@dataclass(frozen=True)
class Blocked:
    """Why the link cannot be used yet: refused (403), or waiting for a proof (200)."""

    problem: str
    status_code: int = 403
    prove: bool = False
    """The viewer may prove the account through the provider's sign-in, from this page."""


def _blocked(request: Request, token: str, claim: LinkClaim, viewer: Viewer) -> Blocked | None:
    """What stands between this viewer and linking the claim's account; None: nothing. A
    forge's account is proven by signing in with it; a chat's or tracker's by its own sign-in
    (`proofs`), unless the link came privately."""
    found = registry.find(claim.provider)
    if found is None:
        return Blocked(f"Resolver has no {claim.provider} integration installed.")
    if found.is_forge:
        problem = _mismatch(claim, viewer)
        return None if problem is None else Blocked(problem)
    if claim.private or proofs.proven(request, token, claim) is not None:
        return None
    name, who = found.display_name, claim.account
    if found.proof is not None and found.proof.client(web_of(request).settings) is not None:
        problem = f"First prove that the {name} account {who} is yours, by signing in with {name}."
        return Blocked(problem, status_code=200, prove=True)
    login = f" --login {claim.login}" if claim.login else ""
    return Blocked(
        f"Resolver cannot check here that the {name} account {who} is yours: signing in with "
        f"{name} is not set up. Ask a Resolver admin to link it for you with `resolver users "
        f"link <your-user> --provider {claim.provider} --external-id {claim.external_id}{login}`.",
        status_code=200,
    )


async def _usable(
    request: Request, viewer: Viewer, *, posting: bool = False
) -> LinkClaim | Response:
    """The link's claim when this viewer may link it now; else the page to show instead (a
    form posted while a proof is still owed is refused)."""
    token = str(request.path_params["token"])
    try:
        claim = read_link(web_of(request).settings, token)
    except LinkError as error:
        return page(request, "link.html", viewer, status_code=403, problem=str(error))
    if await in_transaction(_used, claim):
        return page(request, "link.html", viewer, status_code=410, problem=USED)
    blocked = _blocked(request, token, claim, viewer)
    if blocked is None:
        return claim
    return page(
        request,
        "link.html",
        viewer,
        status_code=403 if posting else blocked.status_code,
        problem=blocked.problem,
        prove=f"/link/{token}/prove" if blocked.prove else None,
        claim=claim,
        display=_display(claim.provider),
    )


def _used(session: Session, claim: LinkClaim) -> bool:
    return used_links.was_used(session, claim.once)


async def link_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    claim = await _usable(request, viewer)
    if isinstance(claim, Response):
        return claim
    return page(request, "link.html", viewer, claim=claim, display=_display(claim.provider))


async def link(request: Request) -> Response:
    viewer = await checked_viewer(request)
    if isinstance(viewer, Response):
        return viewer
    claim = await _usable(request, viewer, posting=True)
    if isinstance(claim, Response):
        return claim
    settings = web_of(request).settings
    proven = proofs.proven(request, str(request.path_params["token"]), claim)
    grant = take_grant(request, settings)
    forge = viewer.person
    key = session_key(request) or ""

    def act(session: Session) -> tuple[int | None, list[int], str | None]:
        now = utcnow()
        if not used_links.use(session, claim.once, claim.expires_at, now):
            raise LinkUsedError
        user = _link_user(session, claim, viewer, proven)
        accounts.signed_in(session, forge.provider, forge.external_id)
        if grant is not None:  # the forge token they signed in with, now theirs
            vault = Vault(settings.fernet_keys)
            save_oauth_token(session, vault, forge.provider, user.id, *grant)
        since = utcnow() - timedelta(seconds=settings.linked_request_seconds)
        waiting = notices.waiting_request(session, claim.provider, claim.external_id, since)
        job_id, callbacks = (None, []) if waiting is None else _run(session, waiting, user)
        rotated = web_sessions.rotate(session, key, now)  # they may now be a user, an admin
        session.commit()
        if job_id is not None:
            publish_job(session, job_id)
        return job_id, callbacks, rotated

    try:
        job_id, callbacks, rotated = await in_transaction(act)
    except accounts.AccountError as error:
        return page(request, "link.html", viewer, status_code=409, problem=str(error))
    except LinkUsedError:
        return page(request, "link.html", viewer, status_code=410, problem=USED)
    if rotated is not None:
        rekey(request, rotated)
    proofs.forget(request)
    record.publish_all(callbacks)
    log(logger, logging.INFO, "web.self_linked", provider=claim.provider, job=job_id)
    message = "Your account is linked."
    if job_id is not None:
        message += f" Your request is running as job {job_id}."
        request.session["flash"] = message
        return RedirectResponse(f"/jobs/{job_id}", status_code=303)
    request.session["flash"] = message
    return RedirectResponse("/me", status_code=303)


def _link_user(session: Session, claim: LinkClaim, viewer: Viewer, proven: str | None) -> User:
    """Link the claim's account: a forge's to its own user (the viewer is signed in with it:
    `_blocked`), a chat's or tracker's to the viewer's."""
    if claim.provider == viewer.person.provider:
        return accounts.self_link(session, claim.provider, claim.external_id, viewer.person.login)
    person = viewer.person
    forge = (person.provider, person.external_id, person.login)
    login = claim.login or proven
    return accounts.link_to_forge_user(session, forge, claim.provider, claim.external_id, login)


def _run(session: Session, notice: Notice, user: Any) -> tuple[int | None, list[int]]:
    """The notice's request as a job of `user`, acknowledged as intake would; once."""
    try:
        context = read_notice_context(notice.context)
    except NoticeContextError as error:  # the link stands; the request cannot be run
        log(logger, logging.WARNING, "web.request_unreadable", notice=notice.id, error=str(error))
        return None, []
    asked, trigger = context.request, context.trigger
    if asked is None:
        return None, []
    sender = trigger.origin.sender
    attempt = session.begin_nested()  # undone alone if another request ran it first
    new = jobs.create_job(
        session,
        jobs.NewJob(
            source=notice.provider,
            task=asked.task,
            repo=asked.repo,
            requester=str((sender.login if sender else None) or user.name),
            requester_id=user.id,
            trigger=dump_trigger(trigger),
            conversation_key=notice.conversation_key,
        ),
    )
    if not notices.claim_request(session, notice.id, new.id):
        attempt.rollback()
        return None, []
    attempt.commit()
    react = record_callback(session, notice.provider, Reaction(job_id=new.id), new.id)
    return new.id, [react.id, *record.record_status(session, new)]


async def me_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)

    def load(session: Session) -> tuple[list[Any], dict[str, str]]:
        if viewer.user_id is None:
            return [], {}
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

    linked, tokens = await in_transaction(load)
    return page(request, "me.html", viewer, identities=linked, tokens=tokens, display=_display)


async def unlink(request: Request) -> Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    viewer = checked
    identity_id = path_id(request, "identity_id")
    if identity_id is None:
        return not_found(request, viewer)

    def act(session: Session) -> str | None:
        if viewer.user_id is None:
            return None
        gone = accounts.unlink(session, viewer.user_id, identity_id)
        return None if gone is None else f"{_display(gone.provider)} {gone.login or ''}"

    gone = await in_transaction(act)
    request.session["flash"] = f"Unlinked {gone.strip()}." if gone else "Nothing was unlinked."
    return RedirectResponse("/me", status_code=303)
