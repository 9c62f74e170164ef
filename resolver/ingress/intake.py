"""From routed triggers to rows: deduplicate, authorize, insert the jobs and the notices.

Triggers come in batches (ingress.batching writes each in one transaction, then publishes), and
a batch costs a few set-based statements, not a few per trigger. A delivery's row is its claim:
the unique `(provider, delivery_key)` constraint lets exactly one copy of a delivery insert it,
and every other copy answers with the first one's job. Notices (unlinked sender, place in the
queue) are recorded in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from integrations import registry
from resolver.contract.callbacks import Reaction, StatusUpdate
from resolver.contract.commands import is_answered
from resolver.contract.inbound import Sender, Trigger, WebhookEvent
from resolver.contract.notices import NoticeContext, NoticeRequest, PrivatePart
from resolver.contract.triggers import (
    JsonObject,
    Origin,
    SenderRef,
    dump_trigger,
    read_trigger,
    with_origin,
)
from resolver.core import tracing
from resolver.core.job import QueuePlace, ahead_counted, place_in_queue
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.ingress.notices import render_unlinked
from resolver.store import (
    accounts,
    callbacks,
    ci_attempts,
    conversations,
    deliveries,
    jobs,
    repo_defaults,
    slots,
)
from resolver.store.deliveries import DeliveryId
from resolver.store.notices import UNLINKED, NewNotice, insert_notices

if TYPE_CHECKING:
    from sqlalchemy import Connection

logger = logging.getLogger(__name__)

Kind = Literal["created", "duplicate", "unlinked", "not_followup", "unlinked_auto"]
"""`unlinked_auto`: an automatic trigger (a review of a pull request as it opens) whose author
has no linked account: nothing can run and nobody asked, so nothing is written (204)."""


@dataclass(frozen=True)
class Accepted:
    """What became of a trigger."""

    kind: Kind
    job_id: int | None = None
    queued_behind: int = 0
    message_id: str | None = None
    callbacks: tuple[int, ...] = ()
    """Callbacks recorded with the trigger: a new job's acknowledgements (sent by the callbacks
    side from the job's one message) or an unlinked sender's notice (sent by its own)."""


@dataclass(frozen=True)
class Pending:
    """A routed trigger on its way to the writer."""

    provider: str
    event: WebhookEvent
    trigger: Trigger
    settings: Settings
    trace: tracing.Carrier = ()
    """The request's trace context: the writer thread records and publishes within it."""

    @property
    def conversation_key(self) -> str:
        return self.trigger.conversation_key[:300]

    @property
    def delivery(self) -> DeliveryId:
        key = self.trigger.once_key or self.event.delivery_key
        return (self.provider, key[:300])


@dataclass(frozen=True)
class _Draft:
    """A trigger that gets a delivery row: its sender's user (if linked) and its job's context."""

    pending: Pending
    user_id: int | None
    context: JsonObject


@dataclass(frozen=True)
class _NewJob:
    id: int
    message_id: str


def record(conn: Connection, batch: Sequence[Pending]) -> list[Accepted]:
    """Write a batch of triggers in the connection's transaction; what became of each."""
    deliveries.lock_conversations(conn, {pending.conversation_key for pending in batch})
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
    """Each linked sender's job goes in first, so that its delivery's row names it as it is
    claimed (no second write); a copy of a delivery claimed before takes its job back."""
    answers, drafts = _drafts(conn, round_)
    created = _insert_jobs(conn, {n: d for n, d in drafts.items() if d.user_id is not None})
    claimed = _claim_deliveries(conn, drafts, created)
    copies = {n: draft for n, draft in drafts.items() if draft.pending.delivery not in claimed}
    jobs.delete_unreferenced(conn, [created.pop(n).id for n in copies if n in created])
    first_jobs = _first_job_ids(conn, [draft.pending.delivery for draft in copies.values()])
    for n, draft in copies.items():
        answers[n] = Accepted("duplicate", first_jobs.get(draft.pending.delivery))
    new = {n: draft for n, draft in drafts.items() if n not in copies}
    answers.update(_create(conn, new, created))
    return [answers[n] for n in range(len(round_))]


def _drafts(
    conn: Connection, round_: list[Pending]
) -> tuple[dict[int, Accepted], dict[int, _Draft]]:
    """Answer follow-ups that have nothing to follow; draft the rest."""
    owned = _as_branch_owner(conn, round_)
    orphans = {n for n, pending in enumerate(owned) if pending is None}
    round_ = [round_[n] if pending is None else pending for n, pending in enumerate(owned)]
    previous = conversations.latest_jobs(conn, {pending.conversation_key for pending in round_})
    users = _linked_users(conn, round_)
    round_ = _with_routed_repos(conn, round_)
    answers: dict[int, Accepted] = {}
    drafts: dict[int, _Draft] = {}
    for n, pending in enumerate(round_):
        before = previous.get(pending.conversation_key)
        if n in orphans or (pending.trigger.followup_only and before is None):
            answers[n] = Accepted("not_followup")
        elif pending.trigger.auto_review and users[n] is None:
            answers[n] = Accepted("unlinked_auto")
        else:
            drafts[n] = _Draft(pending, users[n], _job_context(pending, before))
    return answers, drafts


def _as_branch_owner(conn: Connection, round_: list[Pending]) -> list[Pending | None]:
    """A red check on a bot branch comes from CI: it acts for the requester of the job that
    pushed the branch (None: no job of ours did, so nothing happens). A push to the default
    branch acts for the requester of the newest job on any of the bot's branches."""
    owned: list[Pending | None] = []
    for pending in round_:
        branch, repo = pending.trigger.ci_branch, pending.trigger.repo
        if branch is None and not pending.trigger.bot_branches:
            owned.append(pending)
            continue
        if branch is None:
            found = ci_attempts.bot_branches_owner(conn, pending.provider, repo or "")
        else:
            found = ci_attempts.branch_owner(conn, pending.provider, repo or "", branch)
        sender = found.origin.sender if found else None
        if sender is None or not sender.id:
            owned.append(None)
            continue
        person = Sender(external_id=sender.id, login=sender.login)
        owned.append(replace(pending, trigger=replace(pending.trigger, sender=person)))
    return owned


def _with_routed_repos(conn: Connection, round_: list[Pending]) -> list[Pending]:
    """A chat or tracker request that names no repository takes the default of its channel,
    project or team, as the worker would: its first acknowledgement names it."""
    scopes = [_route_scope(pending) for pending in round_]
    routes = repo_defaults.routed_repos(conn, [scope for scope in scopes if scope is not None])
    routed: list[Pending] = []
    for pending, scope in zip(round_, scopes, strict=True):
        repo = routes.get(scope) if scope is not None else None
        if repo is not None:
            pending = replace(pending, trigger=replace(pending.trigger, repo=repo))
        routed.append(pending)
    return routed


def _route_scope(pending: Pending) -> tuple[str, str] | None:
    if pending.trigger.repo:
        return None
    provider = registry.find(pending.provider)
    if provider is None or provider.route_scope is None:
        return None
    scope = provider.route_scope(pending.trigger.subject)
    return None if scope is None else (pending.provider, scope)


def _linked_users(conn: Connection, round_: list[Pending]) -> list[int | None]:
    """Each sender's user: by external id, all in one query; by login, one by one (rare)."""
    senders = list({(pending.provider, pending.trigger.sender.external_id) for pending in round_})
    by_id = accounts.users_by_sender(conn, senders)
    users: list[int | None] = []
    for pending in round_:
        user_id = by_id.get((pending.provider, pending.trigger.sender.external_id))
        if user_id is None and pending.trigger.sender.login:
            user_id = accounts.user_by_login(conn, pending.provider, pending.trigger.sender.login)
        users.append(user_id)
    return users


def _claim_deliveries(
    conn: Connection, drafts: dict[int, _Draft], created: dict[int, _NewJob]
) -> set[DeliveryId]:
    """Insert each draft's delivery, with its job, unless a copy got there first; the claimed."""
    rows = [
        deliveries.NewDelivery(
            provider=draft.pending.delivery[0],
            delivery_key=draft.pending.delivery[1],
            event=draft.pending.event.key[:100],
            outcome="job" if draft.user_id is not None else UNLINKED,
            job_id=created[n].id if n in created else None,
        )
        for n, draft in drafts.items()
    ]
    return deliveries.claim(conn, rows)


def _first_job_ids(conn: Connection, copies: list[DeliveryId]) -> dict[DeliveryId, int | None]:
    return deliveries.first_jobs(conn, copies) if copies else {}


def _create(
    conn: Connection, new: dict[int, _Draft], created: dict[int, _NewJob]
) -> dict[int, Accepted]:
    """Record each new job's 👀 and first status message (which says its place in the queue),
    and the notices of unlinked senders; answer each claimed delivery. Everything is in the
    caller's transaction, so nothing is acknowledged that was not recorded."""
    linked = {n: new[n] for n in created}
    places = _queue_places(conn, {n: (job.id, linked[n]) for n, job in created.items()})
    acknowledged = _acknowledge(conn, {n: (job.id, linked[n]) for n, job in created.items()})
    unlinked = {n: _unlinked_notice(draft) for n, draft in new.items() if n not in created}
    positions = list(unlinked)
    sending = insert_notices(conn, [unlinked[n] for n in positions])
    notices = dict(zip(positions, sending, strict=True))
    answers: dict[int, Accepted] = {}
    for n, draft in new.items():
        if n in created:
            job = created[n]
            sent = acknowledged[n]
            answers[n] = Accepted("created", job.id, places[n].behind, job.message_id, sent)
        else:
            provider, sender = draft.pending.provider, draft.pending.trigger.sender.external_id
            log(logger, logging.INFO, f"webhook.{provider}.unlinked_sender", sender=sender)
            answers[n] = Accepted("unlinked", callbacks=_ids(notices.get(n)))
    return answers


def _acknowledge(
    conn: Connection, created: dict[int, tuple[int, _Draft]]
) -> dict[int, tuple[int, ...]]:
    """Per new job, the callbacks that acknowledge it at once: 👀 on the triggering message
    (a no-op where the provider has none) and, unless it is a command answered by a reply,
    the status message."""
    kinds = {n: _acknowledgements(draft.pending.trigger) for n, (_, draft) in created.items()}
    rows = [
        callbacks.NewCallback(draft.pending.provider, kind(job_id=job_id), job_id)
        for n, (job_id, draft) in created.items()
        for kind in kinds[n]
    ]
    ids = iter(callbacks.insert_callbacks(conn, rows))
    return {n: tuple(next(ids) for _ in kinds[n]) for n in created}


def _acknowledgements(trigger: Trigger) -> tuple[type[Reaction | StatusUpdate], ...]:
    """A command is answered by a reply; a red check (or a push to the default branch) is only
    spoken of once the worker has read the repository's opt-in and the bounds (most of them
    end quietly)."""
    if trigger.ci_branch is not None or trigger.bot_branches or trigger.auto_review:
        return ()
    return (Reaction,) if is_answered(trigger.task) else (Reaction, StatusUpdate)


def _ids(callback_id: int | None) -> tuple[int, ...]:
    return () if callback_id is None else (callback_id,)


def _insert_jobs(conn: Connection, drafts: dict[int, _Draft]) -> dict[int, _NewJob]:
    """Insert a queued job per draft (each with a linked sender)."""
    positions = list(drafts)
    news = [_new_job(drafts[n]) for n in positions]
    inserted = jobs.insert_jobs(conn, news)
    return {n: _NewJob(*row) for n, row in zip(positions, inserted, strict=True)}


def _new_job(draft: _Draft) -> jobs.NewJob:
    trigger = draft.pending.trigger
    return jobs.NewJob(
        source=draft.pending.provider,
        task=trigger.task,
        repo=trigger.repo,
        requester=trigger.sender.login or trigger.sender.external_id,
        requester_id=draft.user_id,
        trigger=draft.context,
        conversation_key=trigger.conversation_key,
    )


def _queue_places(conn: Connection, queued: dict[int, tuple[int, _Draft]]) -> dict[int, QueuePlace]:
    # One statement for the batch, counting as far as the most generous of its settings.
    bounds = [ahead_counted(draft.pending.settings) for _, draft in queued.values()]
    counted = (max((user for user, _ in bounds), default=0), max((r for _, r in bounds), default=0))
    ahead = slots.jobs_ahead(conn, [job_id for job_id, _ in queued.values()], counted)
    return {
        n: place_in_queue(*ahead[job_id], draft.pending.settings)
        for n, (job_id, draft) in queued.items()
    }


def _job_context(pending: Pending, previous: int | None) -> JsonObject:
    """The job's `trigger` column: what the route made, and where it came from."""
    trigger = pending.trigger
    origin = Origin(
        provider=pending.provider,
        event=pending.event.key,
        delivery=pending.event.delivery_key,
        conversation_key=trigger.conversation_key,
        is_followup=previous is not None,
        previous_job_id=previous,
        sender=SenderRef(id=trigger.sender.external_id, login=trigger.sender.login),
    )
    return dump_trigger(with_origin(trigger.subject, origin))


def _unlinked_notice(draft: _Draft) -> NewNotice:
    pending, trigger = draft.pending, draft.pending.trigger
    sender = trigger.sender
    notice = render_unlinked(pending.provider, sender.external_id, sender.login, pending.settings)
    private = None
    if notice.private is not None:
        private = PrivatePart(to=sender.external_id, text=notice.private, fallback=notice.fallback)
    context = NoticeContext(
        trigger=read_trigger(draft.context),
        # The request itself, to run once the sender has linked their account.
        request=NoticeRequest(task=trigger.task, repo=trigger.repo),
        private=private,
    )
    return NewNotice(
        provider=pending.provider,
        kind=UNLINKED,
        dedup_key=f"{UNLINKED}:{sender.external_id}:{pending.trigger.conversation_key}",
        conversation_key=pending.trigger.conversation_key,
        body=notice.body,
        context=context,
    )
