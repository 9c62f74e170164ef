"""Stored tokens, looked up for a provider by their owner: a user or an installation.

`resolver tokens set --provider P --user NAME` or `--installation ID` stores them (encrypted).
A token, once decrypted, is masked in this process's log lines.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import or_, select

from resolver.core.logs import register_secret
from resolver.core.settings import Settings, get_settings
from resolver.store.db import session_scope
from resolver.store.models import Credential, Installation
from resolver.store.vault import Vault


def stored_token(
    provider: str,
    *,
    user_id: int | None = None,
    installation: str | None = None,
    settings: Settings | None = None,
) -> str | None:
    """The newest unexpired token of `provider` owned by the user or by the installation whose
    external id is `installation` (a Slack team, a Jira site, a GitLab instance, …)."""
    if user_id is None and installation is None:
        return None
    query = select(Credential.ciphertext).where(Credential.provider == provider)
    if user_id is not None:
        query = query.where(Credential.user_id == user_id)
    else:
        query = query.join(Installation, Installation.id == Credential.installation_id).where(
            Installation.provider == provider, Installation.external_id == installation
        )
    now = datetime.now(UTC)
    query = query.where(or_(Credential.expires_at.is_(None), Credential.expires_at > now))
    with session_scope() as session:
        ciphertext = session.scalars(
            query.order_by(Credential.updated_at.desc(), Credential.id.desc())
        ).first()
    if ciphertext is None:
        return None
    token = Vault((settings or get_settings()).fernet_keys).decrypt(ciphertext).reveal()
    register_secret(token)  # masked in every log line of this process from now on
    return token


def token_installations(provider: str) -> list[str]:
    """The external ids of `provider`'s installations that hold a token (Slack teams, Jira
    sites, Linear workspaces), for the preflight to check each one."""
    query = (
        select(Installation.external_id)
        .join(Credential, Credential.installation_id == Installation.id)
        .where(Installation.provider == provider, Credential.provider == provider)
        .distinct()
        .order_by(Installation.external_id)
    )
    with session_scope() as session:
        return list(session.scalars(query))
