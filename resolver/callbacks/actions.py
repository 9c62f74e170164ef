"""The callback actions every provider shares: the status message, 👀, replies, notices and the
pull request. Each posts through the job's provider (`integrations.registry`), and never posts
twice: a post whose answer was lost is found again by its tag.

Each takes the session `send` opened for the try, and ends a step (`end_step`) wherever what it
did must be committed before it goes on: before a post or a call to the provider, so no
transaction waits on the network, and so a mark made before a post is kept when the post fails.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from pydantic import JsonValue

from integrations import registry
from resolver.broker import locks
from resolver.callbacks import status
from resolver.callbacks.record import publish_all, record_status, view_of
from resolver.contract import outbound as providers
from resolver.contract.callbacks import (
    CallbackResult,
    NoticePost,
    PullToOpen,
    PullToUpdate,
    Reaction,
    Reply,
    Sending,
    StatusUpdate,
    ThreadReply,
)
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.notices import (
    NoticeContext,
    NoticeContextError,
    dump_notice_context,
    read_notice_context,
)
from resolver.contract.outbound import OPEN_PULL, REACT, REPLY, STATUS, UPDATE_PULL
from resolver.contract.provider import ThreadResolver
from resolver.contract.pulls import PullChange
from resolver.contract.triggers import Planned, TaskTrigger, in_thread, read_trigger
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.store import bot_pulls, callbacks, jobs
from resolver.store.callbacks import mark_posting
from resolver.store.db import end_step
from resolver.store.models import Job, Notice, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

__all__ = ["OPEN_PULL", "REACT", "REPLY", "STATUS", "UPDATE_PULL"]

# Longer than one edit can take (the clients time out after 30 s); short enough that a worker
# killed while holding it delays the next edit by less than a minute.
STATUS_LOCK_SECONDS: Final = 45
STATUS_LOCK_WAIT: Final = 3
# A provider's clock may run behind ours: look for an unrecorded post from a little earlier.
POSTING_SKEW: Final = timedelta(minutes=5)


@contextmanager
def _status_lock(job_id: int, redis_url: str) -> Iterator[None]:
    """One status writer per job, so the first message is never posted twice."""
    name = f"resolver:status:{job_id}"
    try:
        with locks.held(
            name, redis_url, timeout=STATUS_LOCK_SECONDS, wait=STATUS_LOCK_WAIT
        ) as lock:
            if not lock.acquired:
                raise TransientCallbackError(
                    "another status update is in progress", retry_after=2.0
                )
            yield
    except locks.BrokerError as error:
        raise TransientCallbackError(f"status lock unavailable: {type(error).__name__}") from None


def _job_conversation(
    session: Session, job_id: int, settings: Settings
) -> tuple[providers.Conversation, Job]:
    job = jobs.get_job(session, job_id)
    end_step(session)
    conversation = registry.conversation(
        job.source, read_trigger(job.trigger), job.requester_id, settings
    )
    return conversation, job


def send_status(
    session: Session, sending: Sending[StatusUpdate], settings: Settings
) -> CallbackResult:
    job_id = sending.payload.job_id
    tag = f"status-{job_id}"
    with _status_lock(job_id, settings.redis_url):
        job = jobs.get_job(session, job_id)
        text = status.render(view_of(session, job, settings))
        ref = dict(job.status_ref or {})
        source, trigger, requester_id = job.source, read_trigger(job.trigger), job.requester_id
        end_step(session)
        digest = hashlib.sha256(text.encode()).hexdigest()
        if ref.get("digest") == digest:
            return CallbackResult(unchanged=True)
        conversation = registry.conversation(source, trigger, requester_id, settings)
        message = ref.get("message") or _posted_earlier(conversation, tag, _posting(ref))
        if message:
            conversation.edit(message, text)
        else:
            _mark_status_posting(session, job_id, ref)
            message = conversation.post(text, tag=tag)
        jobs.get_job(session, job_id).status_ref = {"message": message, "digest": digest}
        _supersede(session, job_id, sending.callback_id)
        end_step(session)  # inside the lock: the next writer reads this message
    return CallbackResult(message=message)


def _posting(ref: Mapping[str, JsonValue]) -> datetime | None:
    posting = ref.get("posting")
    return datetime.fromisoformat(posting) if isinstance(posting, str) else None


def _mark_status_posting(session: Session, job_id: int, ref: Mapping[str, JsonValue]) -> None:
    """Record, before the job's first status post, that one may be made (the earliest try's
    time: every later try looks for it)."""
    if _posting(ref) is None:
        jobs.get_job(session, job_id).status_ref = {"posting": utcnow().isoformat()}
        end_step(session)  # committed before the post: a later try looks for it


def _posted_earlier(
    conversation: providers.Conversation, tag: str, earlier: datetime | None
) -> providers.MessageRef | None:
    """The message an earlier try posted with `tag` but never recorded (its answer lost to a
    timeout, or its worker killed first): found again, so it is not posted twice."""
    if earlier is None:
        return None
    found = conversation.find(tag, earlier - POSTING_SKEW)
    if found is not None:
        log(logger, logging.INFO, "callback.found_unrecorded_post", tag=tag)
    return found


def _post_once(
    session: Session, conversation: providers.Conversation, tag: str, text: str, callback_id: int
) -> providers.MessageRef:
    """Post `text` for a callback, unless an earlier try of it already did."""
    earlier = mark_posting(session, callback_id)
    end_step(session)  # committed before the post: a later try looks for it
    found = _posted_earlier(conversation, tag, earlier)
    return found if found is not None else conversation.post(text, tag=tag)


def _supersede(session: Session, job_id: int, newest: int) -> None:
    """Older pending status updates are moot once a newer one has been shown (the message is
    rendered from the job row, never from the callback)."""
    callbacks.supersede(session, job_id, STATUS, newest)


def send_react(session: Session, sending: Sending[Reaction], settings: Settings) -> CallbackResult:
    conversation, _ = _job_conversation(session, sending.payload.job_id, settings)
    conversation.acknowledge()
    return CallbackResult()


def send_reply(session: Session, sending: Sending[Reply], settings: Settings) -> CallbackResult:
    conversation, _ = _job_conversation(session, sending.payload.job_id, settings)
    callback_id, text = sending.callback_id, sending.payload.text
    tag = f"reply-{callback_id}"
    return CallbackResult(message=_post_once(session, conversation, tag, text, callback_id))


def send_notice(
    session: Session, sending: Sending[NoticePost], settings: Settings
) -> CallbackResult:
    provider, notice_id = sending.provider, sending.payload.notice_id
    notice = session.get(Notice, notice_id)
    if notice is None or notice.sent_at is not None:
        return CallbackResult(skipped=True)
    body = notice.body
    try:
        context = read_notice_context(notice.context)
    except NoticeContextError as error:
        raise PermanentCallbackError(f"notice {notice_id}: {error}") from None
    end_step(session)
    body = _send_private(session, provider, notice_id, context, settings) or body
    conversation = registry.conversation(provider, context.trigger, None, settings)
    tag, callback_id = f"notice-{notice_id}", sending.callback_id
    message = _post_once(session, conversation, tag, body, callback_id)
    found = session.get(Notice, notice_id)
    if found is not None:
        found.sent_at = utcnow()
    return CallbackResult(message=message)


def _send_private(
    session: Session,
    provider: str,
    notice_id: int,
    context: NoticeContext,
    settings: Settings,
) -> str | None:
    """The notice's private part (its link), where only its recipient sees it; then dropped
    from the row, so a retry does not send it again and the link is kept nowhere. When the
    provider refuses it for good, the public text to post instead (a public link)."""
    private = context.private
    post = registry.get(provider).post_private
    if private is None or post is None:
        return None
    instead = None
    try:
        post(context.trigger, private.to, private.text, settings)
    except PermanentCallbackError as error:
        log(logger, logging.WARNING, "callback.private_refused", notice=notice_id, error=str(error))
        instead = private.fallback or None
    _drop_private(session, notice_id, context, instead)
    return instead


def _drop_private(
    session: Session, notice_id: int, context: NoticeContext, body: str | None
) -> None:
    """Forget the private part; with `body`, the public text becomes it (a retry posts it)."""
    found = session.get(Notice, notice_id)
    if found is not None:
        kept = NoticeContext(trigger=context.trigger, request=context.request)
        found.context = dump_notice_context(kept)
        if body is not None:
            found.body = body
    end_step(session)  # kept when the public post fails: a retry sends the private part no more


def send_open_pull(
    session: Session, sending: Sending[PullToOpen], settings: Settings
) -> CallbackResult:
    """Open the job's draft pull request, unless one from its branch is open already."""
    provider, job_id = sending.provider, sending.payload.job_id
    job = jobs.get_job(session, job_id)
    view = view_of(session, job, settings)
    trigger, requester_id = read_trigger(job.trigger), job.requester_id
    branch, task = str(job.branch), job.task
    end_step(session)
    planned = planned_of(trigger)
    forge = registry.forge(provider, trigger, requester_id, settings)
    repo, base = planned.repo, str(planned.base)
    title = pull_title(trigger, task)
    fixes = planned.fixes
    pull = forge.find_open_pull(repo, branch) or forge.open_draft_pull(
        repo, branch, base, title, status.pull_body(view, title, fixes)
    )
    # Read again under its lock, after the forge's answer: the watchdog may have written the
    # result meanwhile (a status reposted), and the next writer reads this one's number.
    job = jobs.locked_job(session, job_id)
    job.pr_url = pull.url
    jobs.note_result(job, {"pull_pending": False, "pull_number": pull.number})
    opened = PullChange(repo, pull.number, branch, base, open=True)
    bot_pulls.apply(session, planned.provider, opened)  # before its pull_request event
    ids = record_status(session, job)
    end_step(session)  # published after the commit: the outbox order
    publish_all(ids)
    log(logger, logging.INFO, "job.pull_opened", job=job_id, url=pull.url)
    return CallbackResult(url=pull.url, number=pull.number)


def send_update_pull(
    session: Session, sending: Sending[PullToUpdate], settings: Settings
) -> CallbackResult:
    """Write a follow-up's description (its files and Verification block) onto the pull
    request it pushed to; nothing when that pull request is no longer open."""
    provider, job_id = sending.provider, sending.payload.job_id
    job = jobs.get_job(session, job_id)
    view = view_of(session, job, settings)
    trigger, requester_id = read_trigger(job.trigger), job.requester_id
    branch, task = str(job.branch), job.task
    end_step(session)
    planned = planned_of(trigger)
    forge = registry.forge(provider, trigger, requester_id, settings)
    repo = planned.repo
    pull = forge.find_open_pull(repo, branch)
    if pull is None:
        return CallbackResult(skipped=True)
    title = pull_title(trigger, task)
    forge.edit_pull_body(repo, pull.number, status.pull_body(view, title, planned.fixes))
    log(logger, logging.INFO, "job.pull_updated", job=job_id, url=pull.url)
    return CallbackResult(url=pull.url, number=pull.number)


def planned_of(trigger: TaskTrigger) -> Planned:
    """Where the worker planned the job's pull request; a job it never planned has none."""
    if trigger.planned is None:
        raise PermanentCallbackError("the job has no planned repository for a pull request")
    return trigger.planned


def pull_title(trigger: TaskTrigger, task: str) -> str:
    title = (trigger.title or "").strip()
    if title:
        return title[:200]
    first = task.strip().splitlines()[0] if task.strip() else "Resolver change"
    return first[:200]


def send_thread_reply(
    session: Session, sending: Sending[ThreadReply], settings: Settings
) -> CallbackResult:
    """A reply in one review thread of a review the job took as a batch: the job's conversation,
    moved into the thread by the context entries the provider gave for it; then, when the job
    pushed and the repository allows it, the thread resolved (forges that can)."""
    payload, callback_id = sending.payload, sending.callback_id
    job = jobs.get_job(session, payload.job_id)
    source, trigger, requester_id = job.source, read_trigger(job.trigger), job.requester_id
    end_step(session)
    where = payload.where
    conversation = registry.conversation(source, in_thread(trigger, where), requester_id, settings)
    tag = f"thread-{callback_id}"
    message = _post_once(session, conversation, tag, payload.text, callback_id)
    resolver = registry.get(source).resolve_thread
    if payload.resolve and resolver is not None:
        # After the reply, so a retry finds the reply posted and resolves again (no change).
        _resolve_after_reply(resolver, trigger, requester_id, where, callback_id, settings)
        return CallbackResult(message=message, resolved=True)
    return CallbackResult(message=message)


def _resolve_after_reply(
    resolver: ThreadResolver,
    trigger: TaskTrigger,
    requester_id: int | None,
    where: Mapping[str, JsonValue],
    callback_id: int,
    settings: Settings,
) -> None:
    """A refusal fails the callback saying so (kept on its row, shown on the job page): the
    reply stands, and the thread stays open."""
    try:
        resolver(trigger, requester_id, where, settings)
    except PermanentCallbackError as error:
        fields = {"callback": callback_id, "error": str(error)}
        log(logger, logging.WARNING, "review.resolve_failed", **fields)
        raise PermanentCallbackError(
            f"replied in the thread, but could not resolve it: {error}", status=error.status
        ) from None
