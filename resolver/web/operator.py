"""`/setup/start/<token>`: the operator's link (`resolver setup url`) opens an admin session,
so that `/setup` can be reached before any sign-in exists; once: a second use opens nothing."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from resolver.contract.signin import Person
from resolver.core.logs import log
from resolver.onboarding.operator import OPERATOR, USED, OperatorLinkError, read_operator_token
from resolver.store import used_links
from resolver.store.models import utcnow
from resolver.web.context import in_transaction, page, web_of
from resolver.web.session import open_session, session_key, sign_in

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


async def start(request: Request) -> Response:
    settings = web_of(request).settings
    try:
        link = read_operator_token(settings, str(request.path_params["token"]))
    except OperatorLinkError as error:
        return page(request, "link.html", None, status_code=403, problem=str(error))
    operator = Person(OPERATOR, OPERATOR, OPERATOR)
    old = session_key(request)

    def open_once(session: Session) -> str | None:
        now = utcnow()
        if not used_links.use(session, link.once, link.expires_at, now):
            return None
        return open_session(session, operator, old, settings, now)

    key = await in_transaction(open_once)
    if key is None:
        log(logger, logging.WARNING, "web.operator_link_reused")
        return page(request, "link.html", None, status_code=410, problem=USED)
    sign_in(request, operator, "", key, settings)
    log(logger, logging.INFO, "web.operator_signed_in")
    return RedirectResponse("/setup", status_code=303)
