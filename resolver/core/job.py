"""A job as a runner sees it (`JobContext`), and how it ended (`RunResult`). Pure."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome


@dataclass(frozen=True)
class RunResult:
    """How a job ended. The worker records it; runners never write the job's state."""

    state: JobState
    outcome: Outcome
    error: str | None = None
    result: dict[str, JsonValue] = field(default_factory=dict)
    """What the job's result records of the run (`contract.results.JobResult`'s fields)."""


class AttemptLostError(Exception):
    """This attempt of the job was lost to the infrastructure (its sandbox or the engine went
    away under it): it has no result, and the job runs again, counted against its attempts, as
    after its worker's death."""


@dataclass(frozen=True)
class InboxMessage:
    """A message sent to a running job by a later request of its conversation (steering)."""

    author: str | None
    text: str


Inbox = Callable[[int], list[InboxMessage]]
"""Takes the messages waiting for a running job, at the agent's given step."""


@dataclass
class JobContext:
    """Handed to a runner: the job id, the settings its task read once, the lease owner running
    it, and a flag set when the job should stop."""

    job_id: int
    settings: Settings
    """Read once by the composition root that runs the job (with the stored settings over
    them); every stage of the job takes its values from here."""
    owner: str | None = None
    """The lease owner of this attempt; its sandboxes carry it, so the reaper can tell when
    another attempt has taken the job over."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    on_cancel: list[Callable[[], None]] = field(default_factory=list)
    on_beat: list[Callable[[], None]] = field(default_factory=list)
    """Called on each heartbeat once the lease is renewed: what lives as long as the lease
    (the job's branch lock) is renewed with it."""
    inbox: Inbox | None = None
    """Where the agent takes steering messages from at each step (None: nobody can steer)."""

    def cancel(self) -> None:
        self.cancelled.set()
        for callback in list(self.on_cancel):
            callback()


QUEUE_COUNTED: Final = 100
"""How many jobs past its cap a queue place counts; beyond, it says "at least". Counting every
job ahead made each mention's read grow with the queue: a backlog of 20,000 cost a batch of ten
mentions 21 ms on PostgreSQL, counted up to here 0.6 ms."""


@dataclass(frozen=True)
class QueuePlace:
    """How many jobs must finish before a job may start, and the cap that holds it back.
    `at_least`: more jobs are ahead than were counted (see QUEUE_COUNTED)."""

    behind: int
    limit_name: str = ""
    limit: int = 0
    at_least: bool = False


def ahead_counted(settings: Settings) -> tuple[int, int]:
    """How many active jobs ahead to count at most: of the requester, of the repository."""
    return (
        settings.max_jobs_per_user + QUEUE_COUNTED,
        settings.max_jobs_per_repo + QUEUE_COUNTED,
    )


def place_in_queue(user_ahead: int, repo_ahead: int, settings: Settings) -> QueuePlace:
    """How many jobs must finish before a job may start, under the tighter of the two caps,
    from the jobs ahead counted up to `ahead_counted`."""
    place = QueuePlace(0)
    user_counted, repo_counted = ahead_counted(settings)
    for name, count, limit, counted in (
        ("user", user_ahead, settings.max_jobs_per_user, user_counted),
        ("repository", repo_ahead, settings.max_jobs_per_repo, repo_counted),
    ):
        if count - limit + 1 > place.behind:
            place = QueuePlace(count - limit + 1, name, limit, count >= counted)
    return place
