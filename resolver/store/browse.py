"""What the web app reads: pages of jobs under a viewer's filters, a job's trajectory from a
point on, and the admin's inventory (users, stored tokens, routes). Read-only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, false, func, or_, select
from sqlalchemy.orm import Session, selectinload

from resolver.store.db import like_escaped
from resolver.store.models import Credential, Job, JobEvent, RepoRoute, User


@dataclass(frozen=True)
class JobFilter:
    """The list's filters; an empty one matches every job."""

    state: str = ""
    source: str = ""
    repo: str = ""
    requester: str = ""
    schedule: str = ""


@dataclass(frozen=True)
class Visible:
    """The jobs a viewer who is not an admin may see: their own (as `user_id`), and those in
    the (source, repo) pairs they can read. Callers check each job again (`web.access`)."""

    user_id: int | None
    pairs: frozenset[tuple[str, str]]


def repo_pairs(session: Session) -> list[tuple[str, str]]:
    """Every (source, repository) a job names."""
    query = select(Job.source, Job.repo).where(Job.repo.is_not(None)).distinct()
    return [(source, repo) for source, repo in session.execute(query) if repo]


def _visible(query: Select[Any], visible: Visible | None) -> Select[Any]:
    if visible is None:
        return query
    own = Job.requester_id == visible.user_id if visible.user_id is not None else false()
    readable = [and_(Job.source == s, Job.repo == r) for s, r in sorted(visible.pairs)]
    return query.where(or_(own, *readable))


def _filtered(query: Select[Any], wanted: JobFilter) -> Select[Any]:
    if wanted.state:
        query = query.where(Job.state == wanted.state)
    if wanted.source:
        query = query.where(Job.source == wanted.source)
    if wanted.repo:
        query = query.where(Job.repo == wanted.repo)
    if wanted.requester:
        query = query.where(Job.requester == wanted.requester)
    if wanted.schedule:
        query = query.where(Job.conversation_key.like("schedule:%"))
        query = query.where(Job.task.like(f"{like_escaped(wanted.schedule)}: %", escape="\\"))
    return query


def page_of_jobs(
    session: Session,
    wanted: JobFilter,
    visible: Visible | None,
    *,
    before: int | None,
    size: int,
) -> list[Job]:
    """Newest first, `size` + 1 rows (the extra one says a next page exists), from ids below
    `before`: keyset pagination stays fast deep into a long history."""
    query = _visible(_filtered(select(Job), wanted), visible)
    if before is not None:
        query = query.where(Job.id < before)
    return list(session.scalars(query.order_by(Job.id.desc()).limit(size + 1)))


def events_after(session: Session, job_id: int, after: int, limit: int = 500) -> list[JobEvent]:
    """The job's trajectory entries after `seq`, in order."""
    query = (
        select(JobEvent)
        .where(JobEvent.job_id == job_id, JobEvent.seq > after)
        .order_by(JobEvent.seq)
        .limit(limit)
    )
    return list(session.scalars(query))


@dataclass(frozen=True)
class TokenRow:
    """A stored token, described without its value."""

    provider: str
    kind: str
    owner: str
    scope: str | None
    expires_at: datetime | None
    updated_at: datetime


def users(session: Session) -> Sequence[User]:
    query = select(User).options(selectinload(User.identities)).order_by(User.name)
    return list(session.scalars(query))


def tokens(session: Session) -> list[TokenRow]:
    rows = session.execute(
        select(Credential, User.name)
        .outerjoin(User, User.id == Credential.user_id)
        .order_by(Credential.provider, Credential.kind, Credential.id)
    )
    return [
        TokenRow(
            provider=cred.provider,
            kind=cred.kind,
            owner=name
            or (f"installation {cred.installation_id}" if cred.installation_id else "service"),
            scope=cred.scope,
            expires_at=cred.expires_at,
            updated_at=cred.updated_at,
        )
        for cred, name in rows
    ]


def routes(session: Session) -> list[RepoRoute]:
    query = select(RepoRoute).order_by(RepoRoute.provider, RepoRoute.scope)
    return list(session.scalars(query))


def count_in_state(session: Session, state: str) -> int:
    return int(session.scalar(select(func.count(Job.id)).where(Job.state == state)) or 0)
