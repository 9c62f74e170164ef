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

VERSION: Final = 1
JsonObject: TypeAlias = dict[str, JsonValue]

BOT_BRANCH_PREFIX: Final = "resolver/"
DRAFT: Final = ":draft"
"""Ends the once key of an auto-review of a draft: marking it ready at the same head is then a
new key, so the review skipped while it was a draft still comes."""
"""The bot's own branches (named by `worker.branches`): a red check elsewhere is another's."""


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


class TriggerError(ValueError):
    """A stored trigger that fits no kind."""


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


# --- rows written before these types

# The flat dict's keys that are typed fields; every other key is the provider's part.
_GENERIC: Final = frozenset(
    {
        "repo",
        "clone_url",
        "default_branch",
        "number",
        "is_pull_request",
        "title",
        "body",
        "url",
        "label",
        "assignee",
        "head_ref",
        "head_sha",
        "base_ref",
        "review_batch",
        "ci",
        "base_push",
        "options",
        "branch",
        "schedule_id",
        "run_id",
        "schedule",
        "forge_name",
        "provider",
        "event",
        "delivery",
        "conversation_key",
        "sender",
        "is_followup",
        "previous_job_id",
        "rerun_of",
        "forge",
        # A notice's own entries beside its trigger: the request it holds, its private part.
        "request",
        "private",
    }
)
# What only the older shape names, as this reader of it must: the keys by which a provider
# reached its repository or site (GitHub's installation, GitLab's project, Jira's site,
# Linear's organization, Slack's team); the forges whose number or kind had its own name
# (GitLab's `iid` and `noteable_type`); and the trackers' ticket keys.
_REACH: Final = frozenset({"installation_id", "project_id", "site", "organization_id", "team_id"})
_LEGACY_NUMBER: Final = ("number", "iid")
_LEGACY_TICKET: Final = ("issue_key", "issue_identifier", "issue_id")


def legacy_trigger(data: Mapping[str, object]) -> JsonObject:
    """The new shape of a flat trigger dict (as rows were written before `kind` and `v`)."""
    common: JsonObject = {
        "v": VERSION,
        "title": _text(data.get("title")),
        "body": _text(data.get("body")),
        "url": _text(data.get("url")) or _text(data.get("html_url")),
        "label": _text(data.get("label")),
        "part": {k: _json(v) for k, v in data.items() if k not in _GENERIC | _REACH},
        "reach": {k: _json(v) for k, v in data.items() if k in _REACH},
        "origin": _origin(data),
        "planned": _json(data.get("forge")) if isinstance(data.get("forge"), Mapping) else None,
    }
    return {**common, **_legacy_kind(data)}


def _legacy_kind(data: Mapping[str, object]) -> JsonObject:
    if "schedule_id" in data:
        return _legacy_schedule(data)
    repo = _text(data.get("repo"))
    number = next((n for k in _LEGACY_NUMBER if (n := _int(data.get(k))) is not None), None)
    if repo is not None and isinstance(data.get("base_push"), Mapping):
        return {"kind": "base_push", "repo": _repository(data), "push": _json(data["base_push"])}
    if repo is not None and number is not None:
        return _legacy_forge(data, number)
    ticket = next((t for k in _LEGACY_TICKET if (t := _text(data.get(k)))), None)
    if ticket is not None:
        return {"kind": "tracker_ticket", "key": ticket}
    options = data.get("options")
    return {"kind": "chat_thread", "options": _json(options) if isinstance(options, dict) else {}}


def _legacy_forge(data: Mapping[str, object], number: int) -> JsonObject:
    fields: JsonObject = {
        "repo": _repository(data),
        "number": number,
        "comment_id": _int(data.get("comment_id")) or _int(data.get("note_id")),
        "assignee": _text(data.get("assignee")),
    }
    pull = data.get("is_pull_request") is True or data.get("noteable_type") == "merge_request"
    if not pull:
        return {**fields, "kind": "forge_issue"}
    fields |= {
        "head_ref": _text(data.get("head_ref")) or _text(data.get("source_branch")),
        "head_sha": _text(data.get("head_sha")),
        "base_ref": _text(data.get("base_ref")) or _text(data.get("target_branch")),
    }
    if isinstance(data.get("ci"), Mapping):
        return {**fields, "kind": "ci_failure", "check": _json(data["ci"])}
    if data.get("review_batch"):
        return {**fields, "kind": "review_batch", "review_id": _int(data.get("review_id"))}
    return {**fields, "kind": "pull_request"}


def _legacy_schedule(data: Mapping[str, object]) -> JsonObject:
    if _int(data.get("schedule_id")) is None:
        raise TriggerError("a stored trigger fits no kind: a schedule run names no schedule")
    return {
        "kind": "schedule_run",
        "schedule_id": _int(data.get("schedule_id")),
        "run_id": _int(data.get("run_id")),
        "schedule": _text(data.get("schedule")) or "",
        "forge_name": _text(data.get("forge_name")) or "",
        "repo": _text(data.get("repo")) or "",
    }


def _repository(data: Mapping[str, object]) -> JsonObject:
    return {
        "full_name": _text(data.get("repo")),
        "clone_url": _text(data.get("clone_url")),
        "default_branch": _text(data.get("default_branch")),
    }


def _origin(data: Mapping[str, object]) -> JsonObject:
    sender = data.get("sender")
    sender_id = sender.get("id") if isinstance(sender, Mapping) else None
    return {
        "provider": _text(data.get("provider")),
        "event": _text(data.get("event")),
        "delivery": _text(data.get("delivery")),
        "conversation_key": _text(data.get("conversation_key")),
        "sender": (
            {"id": str(sender_id), "login": _text(sender.get("login"))}
            if isinstance(sender, Mapping) and sender_id is not None
            else None
        ),
        "is_followup": data.get("is_followup") is True,
        "previous_job_id": _int(data.get("previous_job_id")),
        "rerun_of": _int(data.get("rerun_of")),
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _json(value: object) -> JsonValue:
    """A value read from stored JSON, as JSON (anything else becomes its text)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return str(value)
