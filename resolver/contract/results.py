"""A job's result: what its run, its worker and its callbacks recorded, stored in the job's
`result` column as JSON with its `v`, and written through `merged_result` alone. Pure.

The fields Resolver reads back are typed here; a runner's own details (a schedule's action, the
agent's egress, a push job's pull requests) ride along as JSON beside them. A row written
before the version reads as version 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from resolver.contract.triggers import JsonObject

RESULT_VERSION: Final = 1


class ResultError(ValueError):
    """A change that would leave a job's result unreadable: a bug in its writer."""


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
    stopped_by: str | None = None
    stopped_by_account: str | None = None
    steering: int | None = None
    """The running job a parked request waits in."""
    steered: int | None = None
    status_rounds: int = 0
    resolve_threads: bool = False
    review_threads: tuple[JsonObject, ...] = ()
    thread_replies: dict[str, JsonValue] = Field(default_factory=dict)


def read_result(data: Mapping[str, object] | None) -> JobResult:
    """A stored result as its typed value; an unversioned row reads as version 1."""
    try:
        return JobResult.model_validate(dict(data or {}))
    except ValidationError as error:
        raise ResultError(f"a job's result does not read: {error.error_count()} errors") from error


def merged_result(
    stored: Mapping[str, object] | None, changes: Mapping[str, JsonValue]
) -> JsonObject:
    """The result with `changes` made, checked and stamped with its version: the only way a
    job's result is written."""
    try:
        checked = JobResult.model_validate({**dict(stored or {}), **changes, "v": RESULT_VERSION})
    except ValidationError as error:
        raise ResultError(f"a job's result would not read: {error.error_count()} errors") from error
    return checked.model_dump(mode="json", exclude_unset=True)
