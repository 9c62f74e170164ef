"""From routed triggers to rows: deduplicate, authorize, insert the jobs and the notices.

Triggers come in batches (ingress.batching writes each in one transaction, then publishes), and
a batch costs a few set-based statements, not a few per trigger. A delivery's row is its claim:
the unique `(provider, delivery_key)` constraint lets exactly one copy of a delivery insert it,
and every other copy answers with the first one's job. Notices (unlinked sender, place in the
queue) are recorded in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from resolver.contract.inbound import Trigger, WebhookEvent
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.ingress.notices import render_queued, render_unlinked
from resolver.ingress.rows import delivery_row, job_row, record_notices
from resolver.ingress.rows_sql import (
    CLAIM_DELIVERIES,
    FIRST_JOBS,
    INSERT_JOBS,
    JOBS_AHEAD,
    LATEST_JOBS,
    LINK_DELIVERIES,
    USERS_BY_SENDER,
    lock_conversations,
    now,
    run,
    to_json,
)
from resolver.store.accounts import find_identity
from resolver.store.jobs import new_message_id
from resolver.store.notices import QUEUED, UNLINKED, NewNotice

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

Kind = Literal["created", "duplicate", "unlinked", "not_followup"]
DeliveryId = tuple[str, str]
"""(provider, delivery key): what the unique constraint on deliveries is about."""


@dataclass(frozen=True)
class Accepted:
    """What became of a trigger."""

    kind: Kind
    job_id: int | None = None
    queued_behind: int = 0
    message_id: str | None = None
    callbacks: tuple[int, ...] = ()
    """Notices recorded with the trigger, sent once the rows are committed."""


@dataclass(frozen=True)
class QueuePlace:
    behind: int
    limit_name: str = ""
    limit: int = 0


@dataclass(frozen=True)
class Pending:
    """A routed trigger on its way to the writer."""

    provider: str
    event: WebhookEvent
    trigger: Trigger
    settings: Settings

    @property
    def conversation_key(self) -> str:
        return self.trigger.conversation_key[:300]

    @property
    def delivery(self) -> DeliveryId:
        return (self.provider, self.event.delivery_key[:300])


@dataclass(frozen=True)
class _Draft:
    """A trigger that gets a delivery row: its sender's user (if linked) and its job's context."""

    pending: Pending
    user_id: int | None
    context: dict[str, Any]

    @cached_property
    def context_json(self) -> str:
        """Serialized once: the job and its notice store the same context."""
        return to_json(self.context)


@dataclass(frozen=True)
class _NewJob:
    id: int
    message_id: str


def record(conn: Connection, batch: Sequence[Pending]) -> list[Accepted]:
    """Write a batch of triggers in the connection's transaction; what became of each."""
    lock_conversations(conn, {pending.conversation_key for pending in batch})
    answers: dict[int, Accepted] = {}
    for positions in _rounds(batch):
        recorded = _record_round(conn, [batch[n] for n in positions])
        answers.update(zip(positions, recorded, strict=True))
    return [answers[n] for n in range(len(batch))]


def _rounds(batch: Sequence[Pending]) -> list[list[int]]:
    """The batch's positions in rounds where no conversation or delivery appears twice, so that a
    trigger sees what an earlier one wrote: the job it follows up, the delivery it duplicates."""
    rounds: list[list[int]] = []
    taken: list[set[str | DeliveryId]] = []
    for position, pending in enumerate(batch):
        keys: set[str | DeliveryId] = {pending.conversation_key, pending.delivery}
        # The round after the last one that holds any of its keys: order within a key is kept.
        fits = max((n + 1 for n, used in enumerate(taken) if keys & used), default=0)
        if fits == len(rounds):
            rounds.append([])
            taken.append(set())
        rounds[fits].append(position)
        taken[fits] |= keys
    return rounds


def _record_round(conn: Connection, round_: list[Pending]) -> list[Accepted]:
    answers, drafts = _drafts(conn, round_)
    claimed = _claim_deliveries(conn, drafts.values())
    copies = {n: draft for n, draft in drafts.items() if draft.pending.delivery not in claimed}
    first_jobs = _first_job_ids(conn, [draft.pending.delivery for draft in copies.values()])
    for n, draft in copies.items():
        answers[n] = Accepted("duplicate", first_jobs.get(draft.pending.delivery))
    new = {n: draft for n, draft in drafts.items() if n not in copies}
    answers.update(_create(conn, new, claimed))
    return [answers[n] for n in range(len(round_))]


def _drafts(
    conn: Connection, round_: list[Pending]
) -> tuple[dict[int, Accepted], dict[int, _Draft]]:
    """Answer follow-ups that have nothing to follow; draft the rest."""
    keys = [(key,) for key in {pending.conversation_key for pending in round_}]
    previous: dict[str, int | None] = dict(run(conn, LATEST_JOBS, keys))
    users = _linked_users(conn, round_)
    answers: dict[int, Accepted] = {}
    drafts: dict[int, _Draft] = {}
    for n, pending in enumerate(round_):
        before = previous.get(pending.conversation_key)
        if pending.trigger.followup_only and before is None:
            answers[n] = Accepted("not_followup")
        else:
            drafts[n] = _Draft(pending, users[n], _job_context(pending, before))
    return answers, drafts


def _linked_users(conn: Connection, round_: list[Pending]) -> list[int | None]:
    """Each sender's user: by external id, all in one query; by login, one by one (rare)."""
    senders = list({(pending.provider, pending.trigger.sender.external_id) for pending in round_})
    rows = run(conn, USERS_BY_SENDER, senders)
    by_id = {(provider, external_id): user_id for provider, external_id, user_id in rows}
    users: list[int | None] = []
    for pending in round_:
        user_id = by_id.get((pending.provider, pending.trigger.sender.external_id))
        if user_id is None and pending.trigger.sender.login:
            user_id = _user_by_login(conn, pending.provider, pending.trigger.sender.login)
        users.append(user_id)
    return users


def _user_by_login(conn: Connection, provider: str, login: str) -> int | None:
    with Session(bind=conn) as session:  # inside the connection's transaction, which it leaves
        identity = find_identity(session, provider, login=login)
        return identity.user_id if identity else None


def _claim_deliveries(conn: Connection, drafts: Iterable[_Draft]) -> dict[DeliveryId, int]:
    """Insert each draft's delivery unless a copy got there first; the claimed ones' row ids."""
    at = now(conn)
    # One order for every writer, so that concurrent batches (PostgreSQL) cannot deadlock.
    rows = [
        delivery_row(
            *draft.pending.delivery,
            event=draft.pending.event.key[:100],
            outcome="job" if draft.user_id is not None else UNLINKED,
            at=at,
        )
        for draft in sorted(drafts, key=lambda draft: draft.pending.delivery)
    ]
    if not rows:
        return {}
    claimed = run(conn, CLAIM_DELIVERIES, rows)
    return {(provider, key): delivery_id for delivery_id, provider, key in claimed}


def _first_job_ids(conn: Connection, deliveries: list[DeliveryId]) -> dict[DeliveryId, int | None]:
    if not deliveries:
        return {}
    rows = run(conn, FIRST_JOBS, deliveries)
    return {(provider, key): job_id for provider, key, job_id in rows}


def _create(
    conn: Connection, new: dict[int, _Draft], claimed: dict[DeliveryId, int]
) -> dict[int, Accepted]:
    """Insert the jobs of linked senders and the notices; answer each claimed delivery."""
    linked = {n: draft for n, draft in new.items() if draft.user_id is not None}
    jobs = _insert_jobs(conn, linked)
    _link_deliveries(conn, {claimed[linked[n].pending.delivery]: job.id for n, job in jobs.items()})
    places = _queue_places(conn, {n: (job.id, linked[n]) for n, job in jobs.items()})
    notices = _notices(new, jobs, places)
    callbacks = record_notices(conn, notices, {n: new[n].context_json for n in notices})
    answers: dict[int, Accepted] = {}
    for n, draft in new.items():
        sent = _ids(callbacks.get(n))
        if n in jobs:
            job = jobs[n]
            answers[n] = Accepted("created", job.id, places[n].behind, job.message_id, sent)
        else:
            provider, sender = draft.pending.provider, draft.pending.trigger.sender.external_id
            log(logger, logging.INFO, f"webhook.{provider}.unlinked_sender", sender=sender)
            answers[n] = Accepted("unlinked", callbacks=sent)
    return answers


def _notices(
    new: dict[int, _Draft], jobs: dict[int, _NewJob], places: dict[int, QueuePlace]
) -> dict[int, NewNotice]:
    """An unlinked sender is told how to link an account; a job that waits, its place."""
    notices = {n: _unlinked_notice(draft) for n, draft in new.items() if n not in jobs}
    for n, place in places.items():
        if place.behind > 0:
            notices[n] = _queued_notice(new[n], jobs[n].id, place)
    return notices


def _ids(callback_id: int | None) -> tuple[int, ...]:
    return () if callback_id is None else (callback_id,)


def _insert_jobs(conn: Connection, drafts: dict[int, _Draft]) -> dict[int, _NewJob]:
    """Insert a queued job per draft (each with a linked sender)."""
    if not drafts:
        return {}
    # Known before the insert, so publishing needs no second write; and it tells the returned
    # rows apart (RETURNING has no order).
    message_ids = {n: new_message_id() for n in drafts}
    at = now(conn)
    rows = [
        job_row(
            draft.pending.provider,
            draft.pending.trigger,
            draft.user_id,
            draft.context_json,
            message_ids[n],
            at,
        )
        for n, draft in drafts.items()
    ]
    ids = {message_id: job_id for job_id, message_id in run(conn, INSERT_JOBS, rows)}
    return {n: _NewJob(ids[message_id], message_id) for n, message_id in message_ids.items()}


def _link_deliveries(conn: Connection, job_of_delivery: dict[int, int]) -> None:
    if job_of_delivery:
        run(conn, LINK_DELIVERIES, list(job_of_delivery.items()))


def _queue_places(conn: Connection, jobs: dict[int, tuple[int, _Draft]]) -> dict[int, QueuePlace]:
    if not jobs:
        return {}
    rows = run(conn, JOBS_AHEAD, [(job_id,) for job_id, _ in jobs.values()])
    ahead = {job_id: (user_ahead, repo_ahead) for job_id, user_ahead, repo_ahead in rows}
    return {
        n: place_in_queue(*ahead[job_id], draft.pending.settings)
        for n, (job_id, draft) in jobs.items()
    }


def place_in_queue(user_ahead: int, repo_ahead: int, settings: Settings) -> QueuePlace:
    """How many jobs must finish before a job may start, under the tighter of the two caps."""
    place = QueuePlace(0)
    for name, count, limit in (
        ("user", user_ahead, settings.max_jobs_per_user),
        ("repository", repo_ahead, settings.max_jobs_per_repo),
    ):
        if count - limit + 1 > place.behind:
            place = QueuePlace(count - limit + 1, name, limit)
    return place


def _job_context(pending: Pending, previous: int | None) -> dict[str, Any]:
    trigger = pending.trigger
    return {
        **trigger.context,
        "provider": pending.provider,
        "event": pending.event.key,
        "delivery": pending.event.delivery_key,
        "conversation_key": trigger.conversation_key,
        "is_followup": previous is not None,
        "previous_job_id": previous,
        "sender": {"id": trigger.sender.external_id, "login": trigger.sender.login},
    }


def _unlinked_notice(draft: _Draft) -> NewNotice:
    pending, sender = draft.pending, draft.pending.trigger.sender
    return NewNotice(
        provider=pending.provider,
        kind=UNLINKED,
        dedup_key=f"{UNLINKED}:{sender.external_id}:{pending.trigger.conversation_key}",
        conversation_key=pending.trigger.conversation_key,
        body=render_unlinked(pending.provider, sender.external_id, sender.login),
        context=draft.context,
    )


def _queued_notice(draft: _Draft, job_id: int, place: QueuePlace) -> NewNotice:
    return NewNotice(
        provider=draft.pending.provider,
        kind=QUEUED,
        dedup_key=f"{QUEUED}:{job_id}",
        conversation_key=draft.pending.trigger.conversation_key,
        body=render_queued(place.behind, place.limit_name, place.limit),
        context=draft.context,
        job_id=job_id,
    )
