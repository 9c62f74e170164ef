"""Default repositories for conversations that do not name one: a Slack channel, a Jira
project, a Linear team. `resolver routes set slack C0123 owner/name`."""

from __future__ import annotations

from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from resolver.store.models import RepoRoute

ROUTED_PROVIDERS: Final = ("slack", "jira", "linear")
FORGES: Final = ("github", "gitlab")


class RouteError(Exception):
    """A route that cannot be stored; the message says what to write instead."""


def parse_repo_spec(spec: str) -> tuple[str, str]:
    """`github:owner/name`, `gitlab:group/project` or `owner/name` (GitHub) → (forge, name)."""
    forge, sep, name = spec.strip().partition(":")
    if not sep:
        forge, name = "github", spec.strip()
    parts = name.split("/")
    if forge not in FORGES or len(parts) < 2 or not all(parts):
        raise RouteError(
            f"{spec!r} is not a repository: write owner/name, github:owner/name "
            "or gitlab:group/project"
        )
    return forge, name


def set_route(session: Session, provider: str, scope: str, repo: str) -> RepoRoute:
    if provider not in ROUTED_PROVIDERS:
        raise RouteError(f"routes are for {', '.join(ROUTED_PROVIDERS)}, not {provider!r}")
    forge, name = parse_repo_spec(repo)
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
