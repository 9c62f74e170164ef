"""Following `.resolver/schedules.yml` on a repository's default branch.

The file is read from a private shallow clone made with the forge's credentials (`git show`;
such a clone has no work tree), and applied to the repository's file schedules. The beat
re-reads each followed repository every SYNC_EVERY; `resolver schedules sync` reads one now.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from integrations import registry
from integrations.registry import parse_repo_spec
from resolver.agent import git as git_repo
from resolver.contract.errors import CallbackError
from resolver.contract.triggers import ScheduleRun
from resolver.core.logs import log, redact
from resolver.core.settings import Settings
from resolver.schedules.queue import installation_reach
from resolver.schedules.spec import FILE_PATH, ScheduleError, ScheduleFile, parse_file
from resolver.schedules.store import apply_file, in_transaction
from resolver.store.models import ScheduleRepo, utcnow

logger = logging.getLogger(__name__)

SYNC_EVERY: Final = timedelta(minutes=15)
EMPTY: Final = ScheduleFile((), {})


def forge_trigger(spec: str, installation_id: int | None) -> ScheduleRun:
    """What a forge needs to act for a schedule's repository (no run: its file is read)."""
    forge_name, full_name = parse_repo_spec(spec)
    return ScheduleRun(
        schedule="",
        forge_name=forge_name,
        repo=full_name,
        reach=installation_reach(installation_id),
    )


def read_file(clone: git_repo.Clone, ref: str) -> ScheduleFile:
    """The schedules file at `ref` of a clone; no file is no schedules."""
    text = git_repo.show(clone, ref, FILE_PATH)
    return EMPTY if text is None else parse_file(text)


def sync_repo(repo_id: int, workspace_root: Path, settings: Settings) -> list[str]:
    """Read the repository's schedules file now (cloned under `workspace_root`) and apply it.
    Returns what changed; any failure is kept on the repository's row (`resolver schedules list`
    shows it) until a sync succeeds."""
    followed = in_transaction(_followed, repo_id)
    if followed is None:
        return []
    spec, trigger, user_id = followed
    try:
        parsed = _fetch(spec, trigger, user_id, workspace_root, settings)
        changes = in_transaction(_apply, repo_id, parsed)
    except (CallbackError, git_repo.RepoError, ScheduleError) as error:
        message = redact(str(error))
        log(logger, logging.WARNING, "schedule.sync_failed", repo=spec, error=message)
        in_transaction(_record_failure, repo_id, message)
        return []
    except Exception as error:  # a bug, the disk, a value the database refused: kept all the same
        logger.exception("schedule.sync_crashed", extra={"fields": {"repo": spec}})
        # Only the error's kind: its text may quote the file, a path or a statement.
        message = f"internal error: {type(error).__name__} (the worker's log has the details)"
        in_transaction(_record_failure, repo_id, message)
        return []
    log(logger, logging.INFO, "schedule.synced", repo=spec, changes=changes)
    return changes


def _followed(session: Session, repo_id: int) -> tuple[str, ScheduleRun, int | None] | None:
    """The repository's name, how the forge reaches it, and whom it acts as; None if gone."""
    row = session.get(ScheduleRepo, repo_id)
    if row is None:
        return None
    return row.repo, forge_trigger(row.repo, row.installation_id), row.user_id


def _apply(session: Session, repo_id: int, parsed: ScheduleFile) -> list[str]:
    row = session.get(ScheduleRepo, repo_id)
    return apply_file(session, row, parsed) if row is not None else []


def _fetch(
    spec: str, trigger: ScheduleRun, user_id: int | None, root: Path, settings: Settings
) -> ScheduleFile:
    forge_name, full_name = parse_repo_spec(spec)
    forge = registry.forge(forge_name, trigger, user_id, settings)
    info = forge.repository(full_name)
    auth = forge.git_env(info.clone_url)
    with git_repo.private_clone(info.clone_url, root, None, auth, shallow=True) as clone:
        return read_file(clone, "HEAD")


def _record_failure(session: Session, repo_id: int, message: str) -> None:
    row = session.get(ScheduleRepo, repo_id)
    if row is not None:
        row.synced_at, row.sync_error = utcnow(), message[:2000]


def claim_stale(session: Session, now: datetime) -> list[int]:
    """Followed repositories due for a re-read, marked as read now so the next tick does not
    send them again while their sync runs."""
    stale = session.scalars(
        select(ScheduleRepo.id).where(
            ScheduleRepo.follow_file,
            or_(ScheduleRepo.synced_at.is_(None), ScheduleRepo.synced_at < now - SYNC_EVERY),
        )
    ).all()
    if stale:
        session.execute(
            update(ScheduleRepo)
            .where(ScheduleRepo.id.in_(stale))
            .values(synced_at=now)
            .execution_options(synchronize_session=False)
        )
    return list(stale)
