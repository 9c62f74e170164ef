"""Default repositories for conversations that do not name one: a Slack channel, a Jira
project, a Linear team. `resolver routes set slack C0123 owner/name`."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from resolver.store.models import RepoRoute


def set_route(session: Session, provider: str, scope: str, forge: str, name: str) -> RepoRoute:
    """Store `forge:name` as the default repository of `scope` (checked by the caller)."""
    route = session.scalar(
        select(RepoRoute).where(RepoRoute.provider == provider, RepoRoute.scope == scope)
    ) or RepoRoute(provider=provider, scope=scope)
    route.repo = f"{forge}:{name}"
    session.add(route)
    session.flush()
    return route


def remove_route(session: Session, provider: str, scope: str) -> bool:
    route = session.scalar(
        select(RepoRoute).where(RepoRoute.provider == provider, RepoRoute.scope == scope)
    )
    if route is None:
        return False
    session.delete(route)
    return True


def routed_repo(session: Session, provider: str, scope: str) -> str | None:
    return session.scalar(
        select(RepoRoute.repo).where(RepoRoute.provider == provider, RepoRoute.scope == scope)
    )


def all_routes(session: Session) -> list[RepoRoute]:
    return list(session.scalars(select(RepoRoute).order_by(RepoRoute.provider, RepoRoute.scope)))
