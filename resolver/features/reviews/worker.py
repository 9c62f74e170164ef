"""A review taken as one batch (`review_batch` on the trigger): the job gets every open thread
of the pull request, not only the comment that mentioned the bot, and records which threads it
took, so that `reviews.callbacks` replies in each once the job is done."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pydantic import JsonValue

from integrations import registry
from resolver.agent import git as git_repo
from resolver.contract.outbound import History, ReviewThread
from resolver.contract.triggers import ReviewBatch
from resolver.core.states import Outcome
from resolver.features.reviews.contract import RESOLVE_KEY, ReviewsConfigError, parse_reviews_config
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.worker.values import Plan, Snapshot, Stop

MAX_THREADS: Final = 30
MAX_GATHER_SECONDS: Final = 300
"""The longest a review batch waits for its window to close, whatever its trigger says."""


def open_threads(history: History) -> tuple[ReviewThread, ...]:
    """The threads still waiting for the bot: not resolved, and not answered by it last."""
    waiting = (t for t in history.review_threads if t.id and not t.resolved and not t.answered)
    return tuple(waiting)[:MAX_THREADS]


def resolves_threads(
    snapshot: Snapshot, plan: Plan, git_env: dict[str, str] | None, root: Path
) -> bool:
    """Whether a review batch resolves the threads it addressed: its forge can, and
    `.resolver/config.yml` on the default branch says `reviews: {resolve_threads: true}`. A bad
    setting stops the job with what is wrong; other jobs never read it."""
    if not isinstance(snapshot.trigger, ReviewBatch):
        return False
    if registry.get(plan.forge_name).resolve_thread is None:
        return False
    with git_repo.private_clone(plan.repo.clone_url, root, None, git_env, shallow=True) as clone:
        try:
            config = git_repo.repo_config(clone, git_repo.default_ref(clone))
            return parse_reviews_config(config).resolve_threads
        except (ReviewsConfigError, git_repo.RepoError) as error:
            raise Stop(Outcome.COULD_NOT, f"I cannot take the review: {error}") from None


def gather_review(snapshot: Snapshot, cancelled: threading.Event) -> None:
    """A review batch gathered over a window (`ReviewBatch.gather_until`) waits for the window
    to close before its threads are read, so that the comments of the window still being
    written are taken too; a stop ends the wait."""
    trigger = snapshot.trigger
    if not isinstance(trigger, ReviewBatch) or trigger.gather_until is None:
        return
    left = (trigger.gather_until - datetime.now(UTC)).total_seconds()
    if left > 0:
        cancelled.wait(min(left, MAX_GATHER_SECONDS))


def take_review(snapshot: Snapshot, history: History, resolve: bool = False) -> History:
    """For a review batch, the history with only its open threads, which are recorded on the
    job (and whether to resolve them); any other job's history as it is."""
    if not isinstance(snapshot.trigger, ReviewBatch):
        return history
    threads = open_threads(history)
    taken: list[JsonValue] = [{"id": t.id, "where": dict(t.where)} for t in threads]
    with session_scope() as session:
        job = jobs.get_job(session, snapshot.id)
        jobs.note_result(job, {"review_threads": taken, RESOLVE_KEY: resolve})
    return replace(history, review_threads=threads)


def note_pushed(job_id: int) -> Callable[[str, str], None]:
    """Keeps the pushed commit on the job, for the replies that name it."""

    def noted(_branch: str, sha: str) -> None:
        with session_scope() as session:
            job = jobs.get_job(session, job_id)
            jobs.note_result(job, {"pushed_sha": sha})

    return noted
