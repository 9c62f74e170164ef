"""A review taken as one batch (`review_batch` on the trigger): the job gets every open thread
of the pull request, not only the comment that mentioned the bot, and records which threads it
took, so that `callbacks.reviews` replies in each once the job is done."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

from resolver.contract.outbound import History, ReviewThread
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.worker.values import Snapshot

MAX_THREADS: Final = 30


def open_threads(history: History) -> tuple[ReviewThread, ...]:
    """The threads still waiting for the bot: not resolved, and not answered by it last."""
    waiting = (t for t in history.review_threads if t.id and not t.resolved and not t.answered)
    return tuple(waiting)[:MAX_THREADS]


def take_review(snapshot: Snapshot, history: History) -> History:
    """For a review batch, the history with only its open threads, which are recorded on the
    job; any other job's history as it is."""
    if not snapshot.trigger.get("review_batch"):
        return history
    threads = open_threads(history)
    taken = [{"id": t.id, "where": dict(t.where)} for t in threads]
    with session_scope() as session:
        job = jobs.get_job(session, snapshot.id)
        job.result = {**job.result, "review_threads": taken}
    return replace(history, review_threads=threads)


def note_pushed(job_id: int) -> Callable[[str, str], None]:
    """Keeps the pushed commit on the job, for the replies that name it."""

    def noted(_branch: str, sha: str) -> None:
        with session_scope() as session:
            job = jobs.get_job(session, job_id)
            job.result = {**job.result, "pushed_sha": sha}

    return noted
