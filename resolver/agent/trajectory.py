"""The job's event log: every event is redacted, persisted, then folded into the state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from resolver.agent.events import Event, Kind, totals
from resolver.core.redact import Redactor
from resolver.store import browse, jobs
from resolver.store.db import end_step

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class Trajectory:
    """Appends events to `job_events` and keeps the same (redacted) events in memory.

    The agent's state is derived from these events alone, so what the model is shown is what
    the stored trajectory says, secrets masked. Each event is committed as it is appended, in
    the session the loop was handed: the job's page shows the run as it goes.
    """

    def __init__(self, session: Session, job_id: int, redactor: Redactor) -> None:
        self.session = session
        self.job_id = job_id
        self.redactor = redactor
        self.events: list[Event] = []

    def append(self, kind: str, payload: Mapping[str, Any]) -> Event:
        session = self.session
        row = jobs.append_event(session, self.job_id, kind, dict(payload), self.redactor)
        event = Event(row.seq, kind, row.payload)
        if "usage" in payload:
            self._record_spend(session, [*self.events, event])
        end_step(session)
        self.events.append(event)
        return event

    def _record_spend(self, session: Session, events: list[Event]) -> None:
        # Kept current as the run goes, so a status message can show the live cost.
        spent = totals(events)
        job = jobs.get_job(session, self.job_id)
        job.cost_usd = spent.cost_usd
        job.prompt_tokens = spent.prompt_tokens
        job.completion_tokens = spent.completion_tokens


def latest_attempt(session: Session, job_id: int) -> list[Event]:
    """This attempt's stored trajectory (redacted), oldest first: an earlier attempt's runs
    were in another sandbox, so the events start at the newest `task`."""
    events: list[Event] = []
    while True:
        rows = browse.events_after(session, job_id, events[-1].seq if events else 0)
        events += [Event(row.seq, row.kind, row.payload) for row in rows]
        if not rows:
            break
    starts = [index for index, event in enumerate(events) if event.kind == Kind.TASK]
    return events[starts[-1] :] if starts else events
