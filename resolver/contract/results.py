"""A job's result: what its run, its worker and its callbacks recorded, stored in the job's
`result` column as JSON with its `v`, and written through `merged_result` alone. Pure.

Every field Resolver reads back is typed here, a runner's own details too (a schedule's
action, a push job's pull requests, a review); what a feature alone understands inside one of
them is JSON that its own reader decodes. Whatever else a row holds rides along untouched. A
row written before the version reads as version 1, and one written before the details were
typed still reads: a detail of it that does not read reads as absent, and stays on the row.
No row is rewritten for this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from resolver.contract.stored import faults_of
from resolver.contract.triggers import JsonObject

RESULT_VERSION: Final = 1


class ResultError(ValueError):
    """A stored result that does not read, or a change that would leave one so (a bug in its
    writer). The message names the fields at fault, never their values."""


class _Detail(BaseModel):
    # A runner may keep more than Resolver reads: it rides along, as on the result itself.
    model_config = ConfigDict(frozen=True, extra="allow")


class ScheduleDetails(_Detail):
    """What a schedule's run decided (`schedules.runner`), and the diff of a dry run."""

    action: str | None = None
    inputs: str | None = None
    diff: str | None = None


class BranchPush(_Detail):
    """A job's push onto a pull request's branch, recorded before it is made: a retry of the
    job (its worker died before recording it) moves `branch` back from `sha` to `base`."""

    branch: str
    base: str
    sha: str


class PullDone(_Detail):
    """How a push job ended on one of its pull requests."""

    state: str
    outcome: str | None = None
    summary: str | None = None
    error: str | None = None
    conflicts: tuple[str, ...] | None = None
    unresolved: JsonObject | None = None


class JobResult(BaseModel):
    """What a job's result says, as the status message, the job page and the callbacks read it."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    v: Literal[1] = RESULT_VERSION
    summary: str | None = None
    command: str | None = None
    """The command it answered (`stop`, `status`, `run`): it says nothing else."""
    quiet: bool = False
    """It speaks in no conversation (a push to the default branch, a skipped CI fix)."""
    skipped: str | None = None
    max_steps: int | None = None
    notes: tuple[str, ...] = ()
    files_total: int = 0
    pull_pending: bool = False
    pull_number: int | None = None
    pull_error: str | None = None
    updated_pull: bool = False
    pushed_sha: str | None = None
    pushing: BranchPush | None = None
    """The push onto a pull request's branch this job was making (`worker.push`)."""
    stopped_by: str | None = None
    stopped_by_account: str | None = None
    steering: int | None = None
    """The running job a parked request waits in."""
    steered: int | None = None
    status_rounds: int = 0
    resolve_threads: bool = False
    review_threads: tuple[JsonObject, ...] = ()
    thread_replies: dict[str, JsonValue] = Field(default_factory=dict)

    # A runner's own details. A feature decodes what it keeps here with its own reader (the
    # review, the verification, what was left unresolved), as a provider decodes a trigger's
    # `part`. One of these that does not read, in a row written before they were typed, reads
    # as absent and is kept on the row as it was (`DETAILS`).
    agent_outcome: str | None = None
    stop_reason: str | None = None
    steps: int | None = None
    changed: bool | None = None
    files: tuple[tuple[str, int | None, int | None], ...] = ()
    """The branch's changed files (path, lines added, lines removed), the first of them."""
    egress: JsonObject | None = None
    verification: JsonObject | None = None
    review: JsonObject | None = None
    """A review job's review (`features.review_requests`)."""
    schedule: ScheduleDetails | None = None
    pulls: dict[str, PullDone] = Field(default_factory=dict)
    """A push job's pull requests (`conflicts: fix`), by number."""
    conflicts: tuple[str, ...] | None = None
    """The files a merge left in conflict."""
    unresolved: JsonObject | None = None
    """What a merge left unresolved (`features.conflicts`)."""


DETAILS: Final = frozenset(
    {
        "agent_outcome",
        "stop_reason",
        "steps",
        "changed",
        "files",
        "egress",
        "verification",
        "review",
        "schedule",
        "pulls",
        "conflicts",
        "unresolved",
    }
)
"""The fields that read as absent, in a stored row, when they do not read."""


def read_result(data: Mapping[str, object] | None) -> JobResult:
    """A stored result as its typed value; an unversioned row reads as version 1, and a
    runner's detail that does not read reads as absent. Anything else that does not read
    raises `ResultError`, naming the fields (never their values)."""
    fields = dict(data or {})
    try:
        return JobResult.model_validate(fields)
    except ValidationError as error:
        unread = _details_at_fault(error)
        if unread is None:
            raise ResultError(f"a job's result does not read: {faults_of(error)}") from None
    return JobResult.model_validate({k: v for k, v in fields.items() if k not in unread})


def merged_result(
    stored: Mapping[str, object] | None, changes: Mapping[str, JsonValue]
) -> JsonObject:
    """The result with `changes` made, checked and stamped with its version: the only way a
    job's result is written. A stored detail that does not read is kept as it was."""
    kept = {k: v for k, v in (stored or {}).items() if k not in changes}
    legacy: dict[str, object] = {}
    try:
        checked = JobResult.model_validate({**kept, **changes, "v": RESULT_VERSION})
    except ValidationError as error:
        unread = _details_at_fault(error)
        if unread is None or not unread <= kept.keys():
            fault = f"a job's result would not read: {faults_of(error)}"
            raise ResultError(fault) from None
        legacy = {k: kept.pop(k) for k in unread}
        checked = JobResult.model_validate({**kept, **changes, "v": RESULT_VERSION})
    return {**legacy, **checked.model_dump(mode="json", exclude_unset=True)}


def _details_at_fault(error: ValidationError) -> frozenset[str] | None:
    """The runner's details at fault, when they alone are; else None."""
    fields = frozenset(str(fault["loc"][0]) if fault["loc"] else "" for fault in error.errors())
    return fields if fields <= DETAILS else None
