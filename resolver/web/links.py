"""The admin's view of every linked identity, and their revoking of any one of them."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.core.logs import log
from resolver.store import accounts, forget
from resolver.store.db import end_step, get_engine
from resolver.web.actions import checked_viewer
from resolver.web.context import in_transaction, not_found
from resolver.web.inputs import path_id

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


async def revoke(request: Request) -> Response:
    """`POST /admin/links/{identity_id}/revoke`: the identity is unlinked and its user's
    stored token of that provider deleted. Anyone but an admin is told there is nothing here."""
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    identity_id = path_id(request, "identity_id")
    if not checked.admin or identity_id is None:
        return not_found(request, checked)

    def act(session: Session) -> str | None:
        gone = accounts.revoke_link(session, identity_id)
        if gone is None:
            return None
        found = registry.find(gone.provider)
        name = found.display_name if found else gone.provider
        return f"{name} {gone.login or gone.external_id} of {gone.user.name}"

    gone = await in_transaction(act)
    if gone is not None:
        log(logger, logging.INFO, "web.link_revoked", identity=identity_id, by=checked.person.login)
    request.session["flash"] = (
        f"Revoked the link of {gone}, and deleted their stored token there."
        if gone
        else "Nothing was revoked: that link no longer exists."
    )
    return RedirectResponse("/admin", status_code=303)


async def forget_person(request: Request) -> Response:
    """`POST /admin/users/{user_id}/forget`: the person's running jobs are asked to stop; once
    none runs, they are forgotten as `resolver users forget` does. Anyone but an admin is told
    there is nothing here."""
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    user_id = path_id(request, "user_id")
    if not checked.admin or user_id is None:
        return not_found(request, checked)

    def act(session: Session) -> str:
        name = forget.name_of(session, user_id)
        if name is None:
            return "Nobody was forgotten: that user no longer exists."
        running = forget.stop_jobs(session, name)
        end_step(session)
        if running:
            return (
                f"Asked {name}'s running job(s) {', '.join(map(str, running))} to stop; press "
                "Forget again once they have stopped."
            )
        gone = forget.forget_now(get_engine(), name)
        return (
            f"Forgot {gone.name}: {gone.identities} linked account(s), {gone.tokens} token(s) "
            f"and {gone.sessions} web session(s) deleted; {gone.jobs} job(s) kept with their "
            "text removed."
        )

    try:
        said = await in_transaction(act)
    except forget.ForgetError as error:
        said = str(error)
    log(logger, logging.INFO, "web.user_forgotten", user=user_id, by=checked.person.login)
    request.session["flash"] = said
    return RedirectResponse("/admin", status_code=303)
