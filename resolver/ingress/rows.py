"""The rows the intake writes, each as the ORM path writes it (`resolver.store.jobs.create_job`,
`resolver.store.notices.record_notice`): the same columns, with the model's defaults filled in here,
since the statements of resolver.ingress.rows_sql bypass the ORM. The time (`at`) is read once per
statement, so the rows one statement writes share it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from resolver.contract.inbound import Trigger
from resolver.core.states import JobState
from resolver.ingress.rows_sql import (
    CLAIM_DELIVERIES,
    INSERT_CALLBACKS,
    INSERT_JOBS,
    INSERT_NOTICES,
    Values,
    now,
    run,
    to_json,
)
from resolver.store.notices import NOTICE_ACTION, NewNotice

if TYPE_CHECKING:
    from sqlalchemy import Connection

_EMPTY: Final = to_json({})
"""A JSON column's `default=dict`, as stored."""


def delivery_row(provider: str, key: str, event: str, outcome: str, at: Any) -> Values:
    return CLAIM_DELIVERIES.row(
        provider=provider, delivery_key=key, event=event, outcome=outcome, received_at=at
    )


def job_row(
    provider: str,
    trigger: Trigger,
    user_id: int | None,
    context: str,
    message_id: str,
    at: Any,
) -> Values:
    """The columns `resolver.store.jobs.create_job` sets, and the defaults of the others it writes;
    `context` is the job's trigger context as JSON text."""
    return INSERT_JOBS.row(
        source=provider,
        task=trigger.task,
        repo=trigger.repo,
        requester=trigger.sender.login or trigger.sender.external_id,
        requester_id=user_id,
        trigger=context,
        conversation_key=trigger.conversation_key[:300],
        state=JobState.QUEUED.value,
        message_id=message_id,
        result=_EMPTY,
        prompt_tokens=0,
        completion_tokens=0,
        attempts=0,
        cancel_requested=False,
        created_at=at,
        updated_at=at,
    )


def record_notices(
    conn: Connection, notices: dict[int, NewNotice], contexts: dict[int, str]
) -> dict[int, int]:
    """`resolver.store.notices.record_notice` for many: insert each notice unless one with its dedup
    key exists, with the callback that sends it. `contexts` holds each notice's context as JSON
    text (already serialized for its job). The new ones' callback ids, by position."""
    if not notices:
        return {}
    at = now(conn)
    rows = [_notice_row(notice, contexts[n], at) for n, notice in notices.items()]
    positions = {_once(notice): n for n, notice in notices.items()}
    inserted = run(conn, INSERT_NOTICES, rows)
    notice_ids = {positions[(provider, key)]: notice_id for notice_id, provider, key in inserted}
    if not notice_ids:
        return {}
    payloads = {n: to_json({"notice_id": notice_id}) for n, notice_id in notice_ids.items()}
    callbacks = [_callback_row(notices[n], payloads[n], at) for n in notice_ids]
    sending = run(conn, INSERT_CALLBACKS, callbacks)
    sent_by = {payload: callback_id for callback_id, payload in sending}
    return {n: sent_by[payload] for n, payload in payloads.items()}


def _notice_row(notice: NewNotice, context: str, at: Any) -> Values:
    return INSERT_NOTICES.row(
        provider=notice.provider,
        kind=notice.kind,
        dedup_key=_once(notice)[1],
        conversation_key=notice.conversation_key[:300],
        body=notice.body,
        context=context,
        job_id=notice.job_id,
        created_at=at,
    )


def _once(notice: NewNotice) -> tuple[str, str]:
    """What the unique constraint on notices is about."""
    return (notice.provider, notice.dedup_key[:300])


def _callback_row(notice: NewNotice, payload: str, at: Any) -> Values:
    return INSERT_CALLBACKS.row(
        job_id=notice.job_id,
        provider=notice.provider,
        action=NOTICE_ACTION,
        payload=payload,
        state="pending",
        result=_EMPTY,
        created_at=at,
        due_at=at,
    )
