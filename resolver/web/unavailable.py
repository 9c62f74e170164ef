"""A page or API call whose database is locked, busy or mid-upgrade: 503, try again shortly.

Its work ran in one transaction (`context.in_transaction`), rolled back when the statement
failed, so nothing of it is left half-written. Any other database error is a bug, and stays
a 500 with its traceback in the log."""

from __future__ import annotations

import logging
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from resolver.core.logs import log
from resolver.store.availability import unavailable
from resolver.store.db import StoreError
from resolver.web.context import web_of

logger = logging.getLogger(__name__)

RETRY: Final = {"Retry-After": "5"}


async def store_unavailable(request: Request, error: Exception) -> Response:
    """The exception handler of StoreError on the web app's routes."""
    if not isinstance(error, StoreError) or not await run_in_threadpool(unavailable, error):
        raise error
    path = request.url.path
    log(logger, logging.WARNING, "web.database_unavailable", path=path, error=repr(error))
    if path.startswith("/api/"):
        return JSONResponse({"error": "unavailable"}, status_code=503, headers=RETRY)
    values = {
        "viewer": None,
        "csrf": "",
        "flash": None,
        "heading": "Try again shortly",
        "message": "The database is busy or being upgraded; nothing was changed.",
    }
    templates = web_of(request).templates
    return templates.TemplateResponse(request, "error.html", values, status_code=503, headers=RETRY)
