"""Default repositories for conversations that do not name one: a Slack channel, a Jira
project, a Linear team. `resolver routes set slack C0123 owner/name`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from resolver.store.models import Job, RepoRoute

if TYPE_CHECKING:
    from sqlalchemy import Connection


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


def routed_repos(
    conn: Connection | Session, scopes: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """The default repository of each (provider, scope) that has one, in one query."""
    wanted = set(scopes)
    if not wanted:
        return {}
    rows = conn.execute(
        select(RepoRoute.provider, RepoRoute.scope, RepoRoute.repo).where(
            tuple_(RepoRoute.provider, RepoRoute.scope).in_(list(wanted))
        )
    )
    return {(provider, scope): repo for provider, scope, repo in rows}


def all_routes(session: Session) -> list[RepoRoute]:
    return list(session.scalars(select(RepoRoute).order_by(RepoRoute.provider, RepoRoute.scope)))


def known_repositories(session: Session, forge: str, limit: int = 20) -> list[str]:
    """The forge's repositories Resolver knows, routed to or worked on by jobs that came from
    it (newest first), for the preflight to check their webhooks."""
    routed = session.scalars(
        select(RepoRoute.repo).where(RepoRoute.repo.startswith(f"{forge}:", autoescape=True))
    )
    names = [repo.partition(":")[2] for repo in routed]
    worked = session.execute(
        select(Job.repo)
        .where(Job.source == forge, Job.repo.is_not(None))
        .group_by(Job.repo)
        .order_by(func.max(Job.created_at).desc())
        .limit(limit)
    ).scalars()
    names += [repo for repo in worked if repo]
    return list(dict.fromkeys(names))[:limit]
