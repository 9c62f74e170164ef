"""The credentials of a repository's remote MCP servers, in the vault: one header per server
(`Authorization: Bearer …`, say), which only the host sends, and only to the origin the
operator bound it to (a row stored before origins has none, and is not sent).

A repository owns them as an installation of the `mcp` kind, named by its full name, so they
sit in the credentials table beside every other secret and rotate with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from resolver.contract.mcp import Origin
from resolver.store.accounts import ensure_installation
from resolver.store.models import Credential, Installation
from resolver.store.vault import Secret, Vault, store_credential

MCP: Final = "mcp"
HEADER: Final = "header"


@dataclass(frozen=True)
class StoredMcpCredential:
    """One stored credential, without its value."""

    repo: str
    server: str
    header: str
    origin: str | None


@dataclass(frozen=True)
class McpHeader:
    """A server's header as the vault holds it, and the origin it may be sent to (None: not
    bound, so it is not sent)."""

    header: str
    value: Secret
    origin: str | None


def _installation(session: Session, repo: str) -> Installation | None:
    return session.scalars(
        select(Installation).where(Installation.provider == MCP, Installation.external_id == repo)
    ).first()


def set_mcp_credential(
    session: Session, vault: Vault, repo: str, server: str, header: str, value: str, origin: Origin
) -> None:
    """Store (or replace) the header `server` of `repo` is called with, at `origin` alone."""
    owner = ensure_installation(session, MCP, repo, repo)
    store_credential(
        session,
        vault,
        provider=MCP,
        kind=server,
        secret=value,
        installation_id=owner.id,
        scope=header,
        origin=str(origin),
    )


def bind_mcp_credential(session: Session, repo: str, server: str, origin: Origin) -> bool:
    """Bind the stored credential of `server` to `origin`, its value kept; False when there
    is none."""
    found = _credentials(session, repo, server)
    for credential in found:
        credential.origin = str(origin)
    return bool(found)


def remove_mcp_credential(session: Session, repo: str, server: str) -> bool:
    """Forget it; False when there was none."""
    found = _credentials(session, repo, server)
    for credential in found:
        session.delete(credential)
    return bool(found)


def mcp_credentials(
    session: Session, vault: Vault, repo: str, servers: tuple[str, ...]
) -> dict[str, McpHeader]:
    """The header of each of `servers` that has one, by server."""
    return {
        c.kind: McpHeader(c.scope or "Authorization", vault.decrypt(c.ciphertext), c.origin)
        for server in servers
        for c in _credentials(session, repo, server)
    }


def list_mcp_credentials(session: Session) -> list[StoredMcpCredential]:
    """Every stored one, without its value."""
    rows = session.execute(
        select(Installation.external_id, Credential.kind, Credential.scope, Credential.origin)
        .join(Credential, Credential.installation_id == Installation.id)
        .where(Installation.provider == MCP, Credential.provider == MCP)
        .order_by(Installation.external_id, Credential.kind)
    )
    return [
        StoredMcpCredential(repo, server, header or "", origin)
        for repo, server, header, origin in rows
    ]


def _credentials(session: Session, repo: str, server: str) -> list[Credential]:
    owner = _installation(session, repo)
    if owner is None:
        return []
    return list(
        session.scalars(
            select(Credential).where(
                Credential.provider == MCP,
                Credential.kind == server,
                Credential.installation_id == owner.id,
                Credential.revoked_at.is_(None),
            )
        )
    )
