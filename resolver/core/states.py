"""The job state machine. Pure: no I/O."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Outcome(StrEnum):
    """What a finished job did; `state` says whether it finished well."""

    CHANGED_CODE = "changed_code"
    ANSWERED = "answered"
    NO_CHANGES = "no_changes"
    COULD_NOT = "could_not"
    REFUSED = "refused"
    ERROR = "error"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


class IllegalTransitionError(Exception):
    """A job was asked to move between two states the machine does not connect."""

    def __init__(self, current: JobState, target: JobState) -> None:
        super().__init__(f"illegal job transition {current} -> {target}")
        self.current = current
        self.target = target


TRANSITIONS: Final[dict[JobState, frozenset[JobState]]] = {
    # queued -> succeeded: a parked request that a running job took as a steering message.
    JobState.QUEUED: frozenset(
        {JobState.RUNNING, JobState.CANCELLED, JobState.FAILED, JobState.SUCCEEDED}
    ),
    # running -> queued: a worker gave the job back (capacity, or a lost lease).
    JobState.RUNNING: frozenset(
        {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.QUEUED}
    ),
    # succeeded -> failed: a review job whose review the forge never took (the watchdog); the
    # review was all it had to deliver.
    JobState.SUCCEEDED: frozenset({JobState.FAILED}),
    JobState.FAILED: frozenset({JobState.QUEUED}),  # `resolver jobs retry`
    JobState.CANCELLED: frozenset({JobState.QUEUED}),  # `resolver jobs retry`
}

TERMINAL: Final = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})


def check_transition(current: JobState, target: JobState) -> None:
    """Raise IllegalTransitionError unless current -> target is an edge of the machine."""
    if target not in TRANSITIONS[current]:
        raise IllegalTransitionError(current, target)


def is_terminal(state: JobState) -> bool:
    return state in TERMINAL
