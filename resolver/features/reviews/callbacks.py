"""A review handled as one batch: after the job, a reply in each review thread it took, saying
what it did there (the model's own words, keyed by thread) or, failing that, where the change
is. The threads were recorded by the worker (`reviews.worker`) before the agent ran."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Final

from resolver.contract.callbacks import ThreadReply
from resolver.contract.results import read_result
from resolver.core.sanitize import sanitize
from resolver.core.states import JobState, Outcome
from resolver.store.callbacks import record_callback

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.store.models import Job

MAX_REPLY_CHARS: Final = 2_000


def record_thread_replies(
    session: Session, job: Job, hosts: Collection[str], job_link: str
) -> list[int]:
    """One reply callback per review thread the job took; none for a cancelled job (its status
    says so) or a job that never reached its agent (it recorded no threads)."""
    result = read_result(job.result)
    threads = result.review_threads
    if not threads or job.state == JobState.CANCELLED:
        return []
    said = result.thread_replies
    # The threads the pushed commit addressed are resolved after the reply, where allowed.
    resolve = result.resolve_threads and _pushed(job) is not None
    ids: list[int] = []
    for thread in threads:
        # The model's words are shown like every text it writes: sanitised for the forge.
        text = sanitize(render_thread_reply(job, said.get(str(thread.get("id"))), job_link), hosts)
        where = thread.get("where")
        reply = ThreadReply(
            job_id=job.id,
            where=where if isinstance(where, dict) else {},
            text=text,
            resolve=resolve,
        )
        ids.append(record_callback(session, job.source, reply, job.id).id)
    return ids


def render_thread_reply(job: Job, said: object, job_link: str) -> str:
    """What the bot says in one thread: the model's answer for it, with the commit when one was
    pushed; else where the change is, or that none was made and why."""
    sha = _pushed(job)
    if isinstance(said, str) and said.strip():
        text = said.strip()[:MAX_REPLY_CHARS]
        return f"{text}\n\nIn {sha}." if sha else text
    if sha:
        return f"Addressed in {sha}."
    return f"I made no change for this thread ({_ending(job)}). Details: {job_link}"


def _pushed(job: Job) -> str | None:
    sha = read_result(job.result).pushed_sha
    changed = job.state == JobState.SUCCEEDED and job.outcome == Outcome.CHANGED_CODE
    return sha if isinstance(sha, str) and sha and changed else None


def _ending(job: Job) -> str:
    endings: dict[Any, str] = {
        Outcome.ANSWERED: "the job answered without changing code",
        Outcome.NO_CHANGES: "the job found nothing to change",
        Outcome.COULD_NOT: "the job could not do it",
    }
    return endings.get(job.outcome, "the job did not finish its change")
