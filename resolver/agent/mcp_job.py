"""A job's MCP servers, from its repository's config to the tools the loop gets: the
credentials read from the vault on the host, and the servers started beside the agent."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from resolver.agent.mcp_config import McpServer
from resolver.core.settings import Settings
from resolver.store.mcp_credentials import mcp_credentials
from resolver.store.models import Job
from resolver.store.vault import Vault
from sandbox import Sandbox

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.agent.mcp import Credential, McpTools


def repository_of(session: Session, job_id: int, source: str) -> str:
    """The name a repository's MCP credentials are stored under: its full name on the forge
    (the job's), else the source it was cloned from (`resolver run`)."""
    job = session.get(Job, job_id)
    return (job.repo if job is not None else None) or source


def credentials_for(
    session: Session, repo: str, servers: tuple[McpServer, ...], settings: Settings
) -> dict[str, Credential]:
    """The stored header of each remote server that has one, with the origin it is bound to
    (whether it is sent is decided where the server is connected)."""
    from resolver.agent.mcp import Credential

    remote = tuple(s.name for s in servers if s.remote)
    if not remote:
        return {}
    vault = Vault(settings.fernet_keys)
    found = mcp_credentials(session, vault, repo, remote)
    return {
        name: Credential(stored.header, stored.value.reveal(), stored.origin)
        for name, stored in found.items()
    }


@contextmanager
def job_mcp(
    servers: tuple[McpServer, ...],
    sandbox: Sandbox,
    credentials: dict[str, Credential],
    settings: Settings,
) -> Iterator[McpTools | None]:
    """The servers started and listed (None without any); all ended on leaving."""
    if not servers:
        yield None
        return
    from resolver.agent.mcp import McpLimits, McpTools

    limits = McpLimits(settings.mcp_timeout, settings.mcp_max_bytes, settings.sandbox_output_limit)
    with McpTools(servers, sandbox, credentials, limits) as tools:
        yield tools
