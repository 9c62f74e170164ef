"""`/setup/start/<token>`: the operator's link (`resolver setup url`) opens an admin session,
so that `/setup` can be reached before any sign-in exists."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from resolver.contract.signin import Person
from resolver.core.logs import log
from resolver.onboarding.operator import OPERATOR, OperatorLinkError, read_operator_token
from resolver.web.context import page, web_of
from resolver.web.session import sign_in

logger = logging.getLogger(__name__)


async def start(request: Request) -> Response:
    settings = web_of(request).settings
    try:
        read_operator_token(settings, str(request.path_params["token"]))
    except OperatorLinkError as error:
        return page(request, "link.html", None, status_code=403, problem=str(error))
    sign_in(request, Person(OPERATOR, OPERATOR, OPERATOR), "", settings)
    log(logger, logging.INFO, "web.operator_signed_in")
    return RedirectResponse("/setup", status_code=303)
