"""/admin's part for the credentials of repositories' remote MCP servers: store one (its value
goes to the vault and is never shown again, bound to the origin of the server's URL) or remove
one. Only an admin; anyone else is told there is nothing here."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from resolver.contract.mcp import OriginError, credential_problem, parse_origin
from resolver.core.logs import log
from resolver.store.mcp_credentials import remove_mcp_credential, set_mcp_credential
from resolver.store.vault import Vault
from resolver.web.actions import checked_viewer
from resolver.web.context import in_transaction, not_found, web_of

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


async def set_credential(request: Request) -> Response:
    """`POST /admin/mcp`: repo, server, the server's URL, header and value from the form."""
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    if not checked.admin:
        return not_found(request, checked)
    form = await request.form()
    repo, server = _field(form, "repo"), _field(form, "server")
    header, value = _field(form, "header") or "Authorization", _field(form, "value")
    problem, origin = credential_problem(repo, server, header, value), None
    if problem is None:
        try:
            origin = parse_origin(_field(form, "url"))
        except OriginError as error:
            problem = str(error)
    if origin is not None:
        vault = Vault(web_of(request).settings.fernet_keys)

        def store(session: Session) -> None:
            set_mcp_credential(session, vault, repo, server, header, value, origin)

        await in_transaction(store)
        log(
            logger,
            logging.INFO,
            "web.mcp_credential_set",
            server=server,
            origin=str(origin),
            by=checked.person.login,
        )
    request.session["flash"] = (
        f"Nothing was stored: {problem}."
        if origin is None
        else f"Stored the {header} header of {repo}'s MCP server {server}, for {origin}."
    )
    return RedirectResponse("/admin", status_code=303)


async def remove_credential(request: Request) -> Response:
    """`POST /admin/mcp/remove`: repo and server from the form."""
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    if not checked.admin:
        return not_found(request, checked)
    form = await request.form()
    repo, server = _field(form, "repo"), _field(form, "server")

    def remove(session: Session) -> bool:
        return remove_mcp_credential(session, repo, server)

    removed = await in_transaction(remove)
    request.session["flash"] = (
        f"Removed the credential of {repo}'s MCP server {server}."
        if removed
        else "Nothing was removed: there is no such credential."
    )
    return RedirectResponse("/admin", status_code=303)
