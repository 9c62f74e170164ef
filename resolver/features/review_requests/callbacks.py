"""Posting a review job's review: recorded when the job ends (`callbacks.record`), its texts
sanitised there as every posted text is, and sent through the forge's own `post_review`."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from integrations import registry
from resolver.contract.callbacks import CallbackResult, ReviewContent, ReviewToPost, Sending
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.results import read_result
from resolver.contract.review import ReviewPost
from resolver.contract.triggers import read_trigger
from resolver.core.sanitize import sanitize
from resolver.core.settings import Settings
from resolver.core.states import JobState
from resolver.features.review_requests.contract import ReviewResult, read_review
from resolver.store import jobs
from resolver.store.callbacks import record_callback
from resolver.store.db import end_step

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.store.models import Job

MAX_REASON: Final = 500
"""The most of the forge's refusal a failed review job quotes."""


def record_review(session: Session, job: Job, hosts: Collection[str]) -> list[int]:
    """The review callback of a review job that finished its review; none for any other job."""
    review = read_review(read_result(job.result).review)
    if review is None or job.state != JobState.SUCCEEDED:
        return []
    # What the job page also keeps (each comment's place in the diff) is not sent.
    content = ReviewContent.model_validate(sanitized(review, hosts), from_attributes=True)
    payload = ReviewToPost(job_id=job.id, review=content)
    return [record_callback(session, job.source, payload, job.id).id]


def sanitized(review: ReviewResult, hosts: Collection[str]) -> ReviewResult:
    """The review with every text the model wrote made safe to show (a suggestion is code: it
    goes into a fenced block as written)."""
    comments = tuple(replace(c, body=sanitize(c.body, hosts)) for c in review.comments)
    return replace(review, summary=sanitize(review.summary, hosts), comments=comments)


def send_review(
    session: Session, sending: Sending[ReviewToPost], settings: Settings
) -> CallbackResult:
    """Post the recorded review as one review of the job's pull request (in the session of
    the try, `callbacks.send`'s, ended before the post)."""
    provider, review = sending.provider, sending.payload.review
    job = jobs.get_job(session, sending.payload.job_id)
    trigger, requester_id = read_trigger(job.trigger), job.requester_id
    end_step(session)
    post = registry.get(provider).post_review
    if post is None:
        raise PermanentCallbackError(f"{provider} cannot post a review")
    tag = f"review-{sending.callback_id}"
    posted = ReviewPost(
        summary=review.summary,
        verdict=review.verdict,
        comments=review.comments,
        head_sha=review.head_sha,
        base_sha=review.base_sha,
        start_sha=review.start_sha,
        tag=tag,
    )
    return CallbackResult(review=post(trigger, requester_id, posted, settings))


def unposted_reason(error: str | None, pull_word: str) -> str:
    """Why a review job failed after it finished its review: the forge never took the review
    (the callback's error, on one line and cut short). The review stays on the job's page."""
    why = " ".join((error or "no reason was recorded").split())[:MAX_REASON]
    return f"I reviewed this {pull_word}, but the review could not be posted: {why}"
