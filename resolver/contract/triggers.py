"""What a job was asked to do and where it came from: one frozen, typed value per kind of
trigger, stored in a job's `trigger` column as JSON with its `kind` and `v`. Pure.

Generic code reads the typed fields (the repository, the number, the comment, the sender).
What only one provider understands (an installation, a project id, a channel, a site) is its
`part`: JSON that the provider decodes into its own model, and that everyone else passes
along untouched. A row written before these types (a flat dict) still reads: `read_trigger`
converts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

# JsonObject and TriggerError are this module's too: importers name them from here.
from resolver.contract.trigger_base import VERSION
from resolver.contract.trigger_base import JsonObject as JsonObject
from resolver.contract.trigger_base import TriggerError as TriggerError
from resolver.contract.trigger_rows import legacy_trigger

BOT_BRANCH_PREFIX: Final = "resolver/"
"""The bot's own branches (named by `worker.branches`): a red check elsewhere is another's."""
DRAFT: Final = ":draft"
"""Ends the once key of an auto-review of a draft: marking it ready at the same head is then a
new key, so the review skipped while it was a draft still comes."""


@dataclass(frozen=True)
class FailedCheck:
    """A red check (GitHub check run) or failed job (GitLab pipeline) on the bot's branch."""

    name: str
    head_sha: str
    branch: str
    conclusion: str
    url: str | None = None
    check_id: int | None = None
    """The GitHub check run, or the GitLab job, whose details and log are read."""
    pipeline_id: int | None = None
    title: str | None = None
    summary: str | None = None


@dataclass(frozen=True)
class BasePush:
    """A push to a repository's default branch: the new head of the base."""

    branch: str
    sha: str
    config_touched: bool | None = None
    """Whether the push changed `.resolver/config.yml` (None: the event does not say)."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SenderRef(Frozen):
    """Who asked, as intake recorded them: the provider's stable id, and their login."""

    id: str
    login: str | None = None


class Origin(Frozen):
    """What intake recorded about the delivery that made the job."""

    provider: str | None = None
    event: str | None = None
    delivery: str | None = None
    conversation_key: str | None = None
    sender: SenderRef | None = None
    is_followup: bool = False
    previous_job_id: int | None = None
    rerun_of: int | None = None
    """The job that `Run again` asked again."""


class Planned(Frozen):
    """Where the worker decided to work (the callbacks read it): the forge and repository,
    the base branch, and the issue the change fixes."""

    provider: str
    repo: str
    base: str | None = None
    fixes: int | None = None


class Repository(Frozen):
    """A repository as the event named it."""

    full_name: str
    clone_url: str | None = None
    default_branch: str | None = None


class _Trigger(Frozen):
    # A notice keeps its own entries beside the trigger's (the request, a private part).
    model_config = ConfigDict(frozen=True, extra="ignore")

    v: Literal[1] = VERSION
    title: str | None = None
    body: str | None = None
    url: str | None = None
    label: str | None = None
    """The trigger label that was added, when a label started the job."""
    part: JsonObject = Field(default_factory=dict)
    """The provider's own part about this trigger's place (a thread, a comment): only the
    provider reads it."""
    reach: JsonObject = Field(default_factory=dict)
    """The provider's own part about how it reaches the repository or site (an installation,
    a project): what a message elsewhere in the same place keeps. Only the provider reads it."""
    origin: Origin = Origin()
    planned: Planned | None = None


class _OnForge(_Trigger):
    repo: Repository
    number: int
    """The issue's or pull request's number (GitLab: its iid)."""
    comment_id: int | None = None
    """The comment that asked, to react to and reply beside."""
    assignee: str | None = None


class ForgeIssue(_OnForge):
    """An issue on a forge: a comment mentioning the bot, a label, an assignment."""

    kind: Literal["forge_issue"] = "forge_issue"


class _OnPull(_OnForge):
    head_ref: str | None = None
    head_sha: str | None = None
    base_ref: str | None = None


class PullRequest(_OnPull):
    """A pull or merge request: a comment, a review comment or a label on it."""

    kind: Literal["pull_request"] = "pull_request"


class ReviewBatch(_OnPull):
    """A review of a pull request: its job takes every open review thread."""

    kind: Literal["review_batch"] = "review_batch"
    review_id: int | None = None
    gather_until: datetime | None = None
    """Where the forge sends no review, only each comment as it is written: the comments of one
    window are this one job, which reads the threads once the window has closed."""


class ReviewRequest(_OnPull):
    """A request to review a pull request (`@bot review`, or a repository's auto-review): the
    job comments on its diff and posts one review; it never pushes."""

    kind: Literal["review_request"] = "review_request"
    auto: bool = False
    """Started by the pull request's own event (opened, ready, new commits), not a person."""
    draft: bool = False
    """The pull request was a draft when its event came (an auto-review may skip it)."""


class CiFailure(_OnPull):
    """A red check on the head of one of the bot's pull requests."""

    kind: Literal["ci_failure"] = "ci_failure"
    check: FailedCheck


class BasePushed(_Trigger):
    """A push to a repository's default branch (`conflicts: fix`)."""

    kind: Literal["base_push"] = "base_push"
    repo: Repository
    push: BasePush


class ChatThread(_Trigger):
    """A chat thread: a mention or a reply, with the options written inline."""

    kind: Literal["chat_thread"] = "chat_thread"
    options: dict[str, str] = Field(default_factory=dict)

    @property
    def branch(self) -> str | None:
        """`branch=name` in the request: the branch to work from."""
        return self.options.get("branch")


class TrackerTicket(_Trigger):
    """A ticket in an issue tracker: a comment mentioning the bot, or a label."""

    kind: Literal["tracker_ticket"] = "tracker_ticket"
    key: str
    """The ticket's key as people write it (`PROJ-12`, `ENG-3`)."""


class ScheduleRun(_Trigger):
    """A run of a repository's schedule."""

    kind: Literal["schedule_run"] = "schedule_run"
    schedule_id: int | None = None
    """None: no run, but the repository's schedules file being read."""
    run_id: int | None = None
    schedule: str
    forge_name: str
    repo: str


TaskTrigger: TypeAlias = (
    ForgeIssue
    | PullRequest
    | ReviewBatch
    | ReviewRequest
    | CiFailure
    | BasePushed
    | ChatThread
    | TrackerTicket
    | ScheduleRun
)
OnForge: TypeAlias = ForgeIssue | PullRequest | ReviewBatch | ReviewRequest | CiFailure
OnPull: TypeAlias = PullRequest | ReviewBatch | ReviewRequest | CiFailure
_ADAPTER: Final[TypeAdapter[TaskTrigger]] = TypeAdapter(
    Annotated[TaskTrigger, Field(discriminator="kind")]
)


def dump_trigger(trigger: TaskTrigger) -> JsonObject:
    """The JSON a job's `trigger` column stores: the fields, its `kind` and its `v`."""
    return trigger.model_dump(mode="json")


def read_trigger(data: Mapping[str, object] | TaskTrigger) -> TaskTrigger:
    """A stored trigger as its typed value; a row of the older flat shape is converted."""
    if isinstance(data, _Trigger):
        return data
    try:
        if "kind" in data and "v" in data:
            return _ADAPTER.validate_python(dict(data))
        return _ADAPTER.validate_python(legacy_trigger(data))
    except ValidationError as error:
        raise TriggerError(
            f"a stored trigger fits no kind: {error.error_count()} errors"
        ) from error


def is_pull(trigger: TaskTrigger) -> bool:
    """Whether the trigger is about a pull or merge request."""
    return isinstance(trigger, PullRequest | ReviewBatch | ReviewRequest | CiFailure)


def number_of(trigger: TaskTrigger) -> int | None:
    """The issue's or pull request's number, for a trigger on one."""
    return trigger.number if isinstance(trigger, _OnForge) else None


def comment_of(trigger: TaskTrigger) -> int | None:
    """The comment that asked, for a trigger on a forge's issue or pull request."""
    return trigger.comment_id if isinstance(trigger, _OnForge) else None


def repo_of(trigger: TaskTrigger) -> str | None:
    """The repository's full name, where the trigger names one."""
    if isinstance(trigger, _OnForge | BasePushed):
        return trigger.repo.full_name
    if isinstance(trigger, ScheduleRun):
        return trigger.repo
    return None


def in_thread(trigger: TaskTrigger, where: Mapping[str, JsonValue]) -> TaskTrigger:
    """The trigger with its conversation moved into one thread (`ReviewThread.where`: the
    provider's own entries, merged into its part)."""
    return trigger.model_copy(update={"part": {**trigger.part, **where}})


def notice_on_pull(full_name: str, number: int, trigger: TaskTrigger) -> PullRequest:
    """Where to say something on a pull request that is no job's conversation (a notice), as
    the provider of `trigger` (a job of the same repository) reaches it."""
    return PullRequest(
        repo=Repository(full_name=full_name),
        number=number,
        reach=trigger.reach,
        origin=Origin(provider=trigger.origin.provider),
    )


def base_push_in(trigger: TaskTrigger) -> BasePush | None:
    """The push a job's trigger carries; None for any other job."""
    return trigger.push if isinstance(trigger, BasePushed) else None


def failed_check_in(trigger: TaskTrigger) -> FailedCheck | None:
    """The failing check a job's trigger carries; None for any other job."""
    return trigger.check if isinstance(trigger, CiFailure) else None


def pull_of(trigger: TaskTrigger, number: int, title: str, url: str) -> PullRequest:
    """A pull request in the repository `trigger` is about (a push to its base), as its
    provider reaches it and for the same requester."""
    repo = trigger.repo if isinstance(trigger, _OnForge | BasePushed) else None
    return PullRequest(
        repo=repo or Repository(full_name=repo_of(trigger) or ""),
        number=number,
        title=title,
        url=url,
        reach=trigger.reach,
        origin=trigger.origin,
        planned=trigger.planned,
    )


def repository_in(trigger: TaskTrigger) -> Repository | None:
    """The repository as the event described it (its clone URL and default branch)."""
    return trigger.repo if isinstance(trigger, _OnForge | BasePushed) else None


def with_origin(trigger: TaskTrigger, origin: Origin) -> TaskTrigger:
    return trigger.model_copy(update={"origin": origin})


def with_planned(trigger: TaskTrigger, planned: Planned) -> TaskTrigger:
    return trigger.model_copy(update={"planned": planned})
