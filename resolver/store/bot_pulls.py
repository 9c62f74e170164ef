"""The bot's open pull requests and each repository's options, as intake reads them: one indexed
read answers whether a default-branch push or a red check can concern the bot."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final, Literal

from sqlalchemy import and_, bindparam, delete, exists, select, update
from sqlalchemy.dialects import postgresql, sqlite

from resolver.contract.pulls import PullChange, Standing
from resolver.store.models import BotPull, RepoOptions, utcnow

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.orm import Session

Feature = Literal["ci", "conflicts"]
ASKED_FOR: Final = timedelta(minutes=10)
"""How long events wait for the job that was let through to read a repository's options; a job
that never got to read them (it failed first) lets another through after this."""


_INTO_BASE = exists().where(
    BotPull.forge == bindparam("forge"),
    BotPull.repo == bindparam("repo"),
    BotPull.base == bindparam("base"),
    BotPull.closed.is_(False),
)
_STANDING: Final = select(
    RepoOptions.ci_fix,
    RepoOptions.conflicts_fix,
    RepoOptions.ci_asked_at,
    RepoOptions.conflicts_asked_at,
    _INTO_BASE,
).where(RepoOptions.forge == bindparam("forge"), RepoOptions.repo == bindparam("repo"))
"""Built once: building the statement (and adapting its result to the cached compiled form) cost
more than running it, on every default-branch push and red check (bench/ingress's mix)."""


def standing(
    conn: Connection | Session, forge: str, repo: str, base: str | None, now: datetime
) -> Standing | None:
    """The repository's options and whether one of the bot's pull requests is open into `base`,
    in one read; None when no job has read the repository's options yet."""
    values = {"forge": forge, "repo": repo, "base": base or ""}
    row = conn.execute(_STANDING, values).first()
    if row is None:
        return None
    ci_fix, conflicts_fix, ci_asked, conflicts_asked, pull_into_base = row
    return Standing(
        ci_fix=ci_fix,
        conflicts_fix=conflicts_fix,
        ci_reading=_recent(ci_asked, now),
        conflicts_reading=_recent(conflicts_asked, now),
        pull_into_base=bool(pull_into_base),
    )


def _recent(at: datetime | None, now: datetime) -> bool:
    return at is not None and now - at < ASKED_FOR


def asked(conn: Connection | Session, forge: str, repo: str, feature: Feature) -> None:
    """Note that a job reading `feature`'s option was let through now."""
    _upsert(conn, forge, repo, {f"{feature}_asked_at": utcnow()})


def remember_option(
    conn: Connection | Session, forge: str, repo: str, sha: str, feature: Feature, on: bool
) -> None:
    """A job read `feature`'s option (`ci.fix`, `conflicts.fix`) at default-branch commit `sha`."""
    _upsert(conn, forge, repo, {"sha": sha, f"{feature}_fix": on, f"{feature}_asked_at": None})


def forget_options(conn: Connection | Session, forge: str, repo: str) -> None:
    """A push changed `.resolver/config.yml`: the next event runs a job that reads it again."""
    conn.execute(delete(RepoOptions).where(RepoOptions.forge == forge, RepoOptions.repo == repo))


def _upsert(conn: Connection | Session, forge: str, repo: str, values: dict[str, object]) -> None:
    dialect = postgresql if _dialect(conn) == "postgresql" else sqlite
    statement = dialect.insert(RepoOptions).values(
        forge=forge, repo=repo, updated_at=utcnow(), **values
    )
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["forge", "repo"], set_={**values, "updated_at": utcnow()}
        )
    )


def _dialect(conn: Connection | Session) -> str:
    return conn.get_bind().dialect.name if hasattr(conn, "get_bind") else conn.dialect.name


def apply(conn: Connection | Session, forge: str, change: PullChange) -> None:
    """Record one of the bot's pull requests as an event left it."""
    dialect = postgresql if _dialect(conn) == "postgresql" else sqlite
    values = {
        "head": change.head[:255],
        "base": change.base[:255],
        "closed": not change.open,
        "updated_at": utcnow(),
    }
    statement = dialect.insert(BotPull).values(
        forge=forge, repo=change.repo, number=change.number, **values
    )
    conn.execute(
        statement.on_conflict_do_update(index_elements=["forge", "repo", "number"], set_=values)
    )


def replace_into_base(
    conn: Connection | Session, forge: str, repo: str, base: str, pulls: Iterable[tuple[int, str]]
) -> None:
    """What the forge listed as the bot's open pull requests (number, head) into `base` is all
    there is: the rest recorded into it closed while no event told us."""
    listed = dict(pulls)
    conn.execute(
        update(BotPull)
        .where(
            and_(BotPull.forge == forge, BotPull.repo == repo, BotPull.base == base),
            BotPull.number.not_in(list(listed)),
        )
        .values(closed=True, updated_at=utcnow())
    )
    for number, head in listed.items():
        apply(conn, forge, PullChange(repo, number, head, base, open=True))


def open_heads(conn: Connection | Session, forge: str, repo: str) -> set[str]:
    """The head branches of the bot's open pull requests in `repo`."""
    rows = conn.execute(
        select(BotPull.head).where(
            BotPull.forge == forge, BotPull.repo == repo, BotPull.closed.is_(False)
        )
    )
    return {head for (head,) in rows}
