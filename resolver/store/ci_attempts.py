"""Fix attempts per head commit of the bot's branch, counted in one statement so that two
workers never both take the last one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from resolver.contract.triggers import BOT_BRANCH_PREFIX, TaskTrigger, read_trigger
from resolver.store.models import CIAttempt, Job, utcnow

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.orm import Session


def claim_attempt(session: Session, forge: str, repo: str, head_sha: str, most: int) -> int | None:
    """Take the next fix attempt on `head_sha` (its number), or None when `most` are taken.
    One `INSERT … ON CONFLICT DO UPDATE … WHERE attempts < most` on either database: the row
    lock (PostgreSQL) or the write lock (SQLite) orders two claims, and only one gets the last."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(CIAttempt).values(
        forge=forge, repo=repo, head_sha=head_sha, attempts=1, updated_at=utcnow()
    )
    statement = statement.on_conflict_do_update(
        index_elements=["forge", "repo", "head_sha"],
        set_={"attempts": CIAttempt.attempts + 1, "updated_at": utcnow()},
        where=CIAttempt.attempts < most,
    ).returning(CIAttempt.attempts)
    taken = session.execute(statement).scalar()
    return None if taken is None or taken > most else int(taken)


def attempts_on(session: Session, forge: str, repo: str, head_sha: str) -> int:
    found = session.execute(
        select(CIAttempt.attempts).where(
            CIAttempt.forge == forge, CIAttempt.repo == repo, CIAttempt.head_sha == head_sha
        )
    ).scalar()
    return int(found or 0)


def branch_owner(conn: Connection, source: str, repo: str, branch: str) -> TaskTrigger | None:
    """The trigger of the newest job of a linked requester that worked on `branch` of `repo`
    (whose requester a red check there is followed up for); None when no job did."""
    found = conn.execute(
        select(Job.trigger)
        .where(
            Job.source == source,
            Job.repo == repo,
            Job.branch == branch,
            Job.requester_id.is_not(None),
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).scalar()
    return read_trigger(found) if isinstance(found, dict) else None


def bot_branches_owner(conn: Connection, source: str, repo: str) -> TaskTrigger | None:
    """The trigger of the newest job of a linked requester on any of the bot's branches of
    `repo` (a push to the default branch acts for them); None when no job has one."""
    found = conn.execute(
        select(Job.trigger)
        .where(
            Job.source == source,
            Job.repo == repo,
            Job.branch.like(f"{BOT_BRANCH_PREFIX}%"),
            Job.requester_id.is_not(None),
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).scalar()
    return read_trigger(found) if isinstance(found, dict) else None
