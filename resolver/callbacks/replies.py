"""The callback actions every provider shares: the status message, 👀, replies, notices and the
pull request. Each runs as its own Celery task (resolver.callbacks.send), one attempt row per try.

Recording is done inside the caller's transaction (`record_*`, returning callback ids); the
caller publishes the ids after its commit (`publish_all`), the outbox order.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta
from typing import Any, Final
from urllib.parse import urlsplit

import redis
from sqlalchemy import update
from sqlalchemy.orm import Session

from resolver.callbacks import status
from resolver.callbacks.send import (
    mark_posting,
    publish_callback,
    record_callback,
    register_action,
)
from resolver.contract import outbound as providers
from resolver.contract.errors import TransientCallbackError
from resolver.core.logs import log
from resolver.core.sanitize import sanitize
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job, Notice, utcnow
from resolver.store.notices import NOTICE_ACTION

logger = logging.getLogger(__name__)

STATUS: Final = "status"
REACT: Final = "react"
REPLY: Final = "reply"
OPEN_PULL: Final = "open_pull"
# Longer than one edit can take (the clients time out after 30 s); short enough that a worker
# killed while holding it delays the next edit by less than a minute.
STATUS_LOCK_SECONDS: Final = 45
STATUS_LOCK_WAIT: Final = 3
# A provider's clock may run behind ours: look for an unrecorded post from a little earlier.
POSTING_SKEW: Final = timedelta(minutes=5)


def job_url(job_id: int) -> str:
    return f"{get_settings().public_url.rstrip('/')}/api/jobs/{job_id}"


def forge_of(job: Job) -> dict[str, Any]:
    """Where the job's repository lives, as the worker planned it (`trigger["forge"]`)."""
    value = job.trigger.get("forge")
    return dict(value) if isinstance(value, Mapping) else {}


def view_of(session: Session, job: Job) -> status.JobView:
    steps = jobs.count_steps(session, job.id)
    result = job.result or {}
    forge = forge_of(job)
    # What the model (or a repository's setup output) wrote is shown sanitised; a refusal is
    # the bot's own words, which name the requester on purpose.
    hosts = forge_hosts(job)
    error = job.error
    if error and job.outcome != Outcome.REFUSED:
        error = sanitize(error, hosts)
    return status.JobView(
        id=job.id,
        state=job.state,
        outcome=job.outcome,
        repo=forge.get("repo") or job.repo,
        steps=steps,
        cost_usd=job.cost_usd,
        started_at=job.started_at,
        finished_at=job.finished_at,
        now=utcnow(),
        job_url=job_url(job.id),
        summary=sanitize(str(result.get("summary") or ""), hosts),
        error=error,
        pr_url=job.pr_url,
        branch=job.branch,
        pr_pending=bool(result.get("pull_pending")) and not job.pr_url,
        updated_pull=bool(result.get("updated_pull")),
        max_steps=result.get("max_steps"),
        pull_word="merge request" if forge.get("provider") == "gitlab" else "pull request",
        pull_error=str(result.get("pull_error") or "") or None,
        notes=tuple(str(note) for note in result.get("notes") or ()),
    )


def forge_hosts(job: Job) -> set[str]:
    """The hosts of the job's own forge pages: images there may stay images."""
    trigger = job.trigger or {}
    urls = (trigger.get("html_url"), trigger.get("url"), job.pr_url)
    return {urlsplit(url).hostname or "" for url in urls if isinstance(url, str)} - {""}


def has_conversation(job: Job) -> bool:
    return job.source in providers.PROVIDERS


# --- recording (inside the caller's transaction)


def record_status(session: Session, job: Job) -> list[int]:
    """Ask for the job's status message to be brought up to date."""
    if not has_conversation(job) or job.result.get("command"):
        return []
    callback = record_callback(session, job.source, STATUS, {"job_id": job.id}, job.id)
    # Its own id lets a sent update retire the older ones still pending.
    callback.payload = {"job_id": job.id, "callback_id": callback.id}
    return [callback.id]


def record_acknowledgement(session: Session, job: Job) -> list[int]:
    """👀 on the triggering message and the first status message."""
    if not has_conversation(job):
        return []
    react = record_callback(session, job.source, REACT, {"job_id": job.id}, job.id)
    return [react.id, *record_status(session, job)]


def record_reply(session: Session, job: Job, text: str) -> list[int]:
    """A plain reply in the job's conversation (answers to `@bot status` and `@bot stop`)."""
    if not has_conversation(job):
        return []
    payload = {"job_id": job.id, "text": text}
    return [record_callback(session, job.source, REPLY, payload, job.id).id]


def record_finish(session: Session, job: Job) -> list[int]:
    """What a finished job sends: its pull request (when it pushed a new branch), its status."""
    ids: list[int] = []
    forge = forge_of(job)
    wants_pull = (
        job.state == JobState.SUCCEEDED
        and job.outcome == Outcome.CHANGED_CODE
        and job.branch
        and not job.pr_url
        and forge.get("provider")
    )
    if wants_pull:
        job.result = {**job.result, "pull_pending": True}
        callback = record_callback(
            session, forge["provider"], OPEN_PULL, {"job_id": job.id}, job.id
        )
        ids.append(callback.id)
    return ids + record_status(session, job)


def publish_all(callback_ids: list[int]) -> None:
    """Publish recorded callbacks after their commit; one that fails is left to the reconciler."""
    for callback_id in callback_ids:
        try:
            publish_callback(callback_id)
        except Exception as error:  # committed rows: the reconciler re-sends stalled callbacks
            log(
                logger,
                logging.WARNING,
                "callback.publish_failed",
                callback=callback_id,
                error=repr(error),
            )


def request_status(job_id: int) -> None:
    """Record and publish a status update for `job_id` (progress during a run)."""
    with session_scope() as session:
        ids = record_status(session, jobs.get_job(session, job_id))
    publish_all(ids)


# --- sending (the callback task)


@contextmanager
def _status_lock(job_id: int) -> Iterator[None]:
    """One status writer per job, so the first message is never posted twice."""
    client = redis.Redis.from_url(get_settings().redis_url)
    lock = client.lock(
        f"resolver:status:{job_id}", timeout=STATUS_LOCK_SECONDS, blocking_timeout=STATUS_LOCK_WAIT
    )
    try:
        acquired = lock.acquire()
    except redis.RedisError as error:
        raise TransientCallbackError(f"status lock unavailable: {type(error).__name__}") from None
    if not acquired:
        raise TransientCallbackError("another status update is in progress", retry_after=2.0)
    try:
        yield
    finally:
        with suppress(redis.RedisError):  # expired or Redis gone: the timeout frees it
            lock.release()
        client.close()


def _job_conversation(job_id: int) -> tuple[providers.Conversation, Job]:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        session.expunge(job)
    return providers.conversation(job.source, job.trigger, job.requester_id), job


def send_status(provider: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    job_id = int(payload["job_id"])
    tag = f"status-{job_id}"
    with _status_lock(job_id):
        with session_scope() as session:
            job = jobs.get_job(session, job_id)
            text = status.render(view_of(session, job))
            ref = dict(job.status_ref or {})
            source, trigger, requester_id = job.source, dict(job.trigger), job.requester_id
        digest = hashlib.sha256(text.encode()).hexdigest()
        if ref.get("digest") == digest:
            return {"unchanged": True}
        conversation = providers.conversation(source, trigger, requester_id)
        message = ref.get("message") or _posted_earlier(conversation, tag, _posting(ref))
        if message:
            conversation.edit(message, text)
        else:
            _mark_status_posting(job_id, ref)
            message = conversation.post(text, tag=tag)
        with session_scope() as session:
            jobs.get_job(session, job_id).status_ref = {"message": message, "digest": digest}
            _supersede(session, job_id, int(payload.get("callback_id") or 0))
    return {"message": message}


def _posting(ref: Mapping[str, Any]) -> datetime | None:
    posting = ref.get("posting")
    return datetime.fromisoformat(posting) if isinstance(posting, str) else None


def _mark_status_posting(job_id: int, ref: Mapping[str, Any]) -> None:
    """Record, before the job's first status post, that one may be made (the earliest try's
    time: every later try looks for it)."""
    if _posting(ref) is None:
        with session_scope() as session:
            jobs.get_job(session, job_id).status_ref = {"posting": utcnow().isoformat()}


def _posted_earlier(
    conversation: providers.Conversation, tag: str, earlier: datetime | None
) -> dict[str, Any] | None:
    """The message an earlier try posted with `tag` but never recorded (its answer lost to a
    timeout, or its worker killed first): found again, so it is not posted twice."""
    if earlier is None:
        return None
    found = conversation.find(tag, earlier - POSTING_SKEW)
    if found is not None:
        log(logger, logging.INFO, "callback.found_unrecorded_post", tag=tag)
    return found


def _post_once(
    conversation: providers.Conversation, tag: str, text: str, callback_id: int
) -> dict[str, Any]:
    """Post `text` for a callback, unless an earlier try of it already did."""
    found = _posted_earlier(conversation, tag, mark_posting(callback_id))
    return found if found is not None else conversation.post(text, tag=tag)


def _supersede(session: Session, job_id: int, newest: int) -> None:
    """Older pending status updates are moot once a newer one has been shown (the message is
    rendered from the job row, never from the callback)."""
    session.execute(
        update(Callback)
        .where(
            Callback.job_id == job_id,
            Callback.action == STATUS,
            Callback.state == "pending",
            Callback.id < newest,
        )
        .values(state="superseded", finished_at=utcnow())
        .execution_options(synchronize_session=False)
    )


def send_react(provider: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    conversation, _ = _job_conversation(int(payload["job_id"]))
    conversation.acknowledge()
    return {}


def send_reply(provider: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    conversation, _ = _job_conversation(int(payload["job_id"]))
    callback_id = int(payload["callback_id"])
    text = str(payload["text"])
    return {"message": _post_once(conversation, f"reply-{callback_id}", text, callback_id)}


def send_notice(provider: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    notice_id = int(payload["notice_id"])
    with session_scope() as session:
        notice = session.get(Notice, notice_id)
        if notice is None or notice.sent_at is not None:
            return {"skipped": True}
        context, body = dict(notice.context), notice.body
    conversation = providers.conversation(provider, context, None)
    message = _post_once(conversation, f"notice-{notice_id}", body, int(payload["callback_id"]))
    with session_scope() as session:
        found = session.get(Notice, notice_id)
        if found is not None:
            found.sent_at = utcnow()
    return {"message": message}


def send_open_pull(provider: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Open the job's draft pull request, unless one from its branch is open already."""
    job_id = int(payload["job_id"])
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        view = view_of(session, job)
        trigger, requester_id = dict(job.trigger), job.requester_id
        forge_info, branch, task = forge_of(job), str(job.branch), job.task
    forge = providers.forge(provider, trigger, requester_id)
    repo, base = str(forge_info["repo"]), str(forge_info["base"])
    title = pull_title(trigger, task)
    fixes = forge_info.get("fixes")
    pull = forge.find_open_pull(repo, branch) or forge.open_draft_pull(
        repo, branch, base, title, status.pull_body(view, title, fixes)
    )
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        job.pr_url = pull.url
        job.result = {**job.result, "pull_pending": False, "pull_number": pull.number}
        ids = record_status(session, job)
    publish_all(ids)
    log(logger, logging.INFO, "job.pull_opened", job=job_id, url=pull.url)
    return {"url": pull.url, "number": pull.number}


def pull_title(trigger: Mapping[str, Any], task: str) -> str:
    title = str(trigger.get("title") or "").strip()
    if title:
        return title[:200]
    first = task.strip().splitlines()[0] if task.strip() else "Resolver change"
    return first[:200]


register_action(STATUS, send_status)
register_action(REACT, send_react)
register_action(REPLY, send_reply)
register_action(NOTICE_ACTION, send_notice)
register_action(OPEN_PULL, send_open_pull)
