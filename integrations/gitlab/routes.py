"""GitLab events we act on, the ones we deliberately ignore, and their handlers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from pydantic import JsonValue, TypeAdapter

from integrations.gitlab.events import (
    Noteable,
    NoteEvent,
    PipelineEvent,
    Project,
    PushEvent,
    User,
    WorkItemEvent,
)
from integrations.gitlab.review_routes import MergeRequestEvent, on_merge_request_changed
from resolver.contract.inbound import Policy, Route, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.pulls import touches_config
from resolver.contract.triggers import (
    BOT_BRANCH_PREFIX,
    BasePush,
    BasePushed,
    CiFailure,
    FailedCheck,
    ForgeIssue,
    JsonObject,
    OnForge,
    PullRequest,
    Repository,
    ReviewBatch,
)
from resolver.features.ci.contract import build_fix_task

_KINDS = {"Issue": "issue", "MergeRequest": "merge_request"}
_THREAD_NOTES: Final = frozenset({"DiffNote", "DiscussionNote"})
# GitLab's `after` for a deleted branch. https://docs.gitlab.com/user/project/integrations/webhook_events/#push-events
_DELETED: Final = "0" * 40


def on_note(event: NoteEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a new comment on an issue or merge request, diff notes included."""
    note = event.object_attributes
    if note.system or note.action == "update" or note.noteable_type not in _KINDS:
        return None
    target = event.issue if note.noteable_type == "Issue" else event.merge_request
    request = mentions(note.note, policy.bot_name)
    if target is None or request is None:
        return None
    part: JsonObject = {
        "note_type": note.type,
        "discussion_id": note.discussion_id,
        "position": _json(note.position),
        "line_code": note.line_code,
    }
    fields = _fields(event.project, target, part)
    fields.update(url=note.url, comment_id=note.id)
    if note.noteable_type == "Issue":
        return _trigger(event.user, event.project, ForgeIssue(**fields), request)
    if note.type in _THREAD_NOTES and (target.source_branch or "").startswith(BOT_BRANCH_PREFIX):
        # A mention in a thread of the bot's own merge request: its job takes every unresolved
        # discussion (`reviews.worker`). GitLab gives the notes of one review no common id, so
        # a mention while the batch runs joins it (steering); any other is a job of its own,
        # which leaves out the threads the bot answered last.
        # Its status goes to the merge request, not into the mention's thread (the bot speaking
        # last there would count the thread as answered); each thread gets its own reply.
        fields["part"] = {**part, "discussion_id": None, "mention_discussion": note.discussion_id}
        return _trigger(event.user, event.project, ReviewBatch(**fields), request)
    return _trigger(event.user, event.project, PullRequest(**fields), request)


def on_issue(event: WorkItemEvent, policy: Policy) -> Trigger | None:
    """The trigger label was newly added to an issue."""
    return _on_labels(event, policy, ForgeIssue)


def on_merge_request(event: MergeRequestEvent, policy: Policy) -> Trigger | None:
    """The trigger label was newly added to a merge request (a person's request comes first);
    else an auto-review when it was opened or reopened, given new commits or marked ready
    (`review_routes.py`)."""
    labelled = _on_labels(event, policy, PullRequest)
    return labelled if labelled is not None else on_merge_request_changed(event, policy)


def _on_labels(
    event: WorkItemEvent, policy: Policy, kind: type[ForgeIssue | PullRequest]
) -> Trigger | None:
    change = event.changes.labels if event.changes else None
    if change is None:
        return None
    before = {
        label.title for label in change.previous or [] if policy.is_trigger_label(label.title)
    }
    now = {label.title for label in change.current or [] if policy.is_trigger_label(label.title)}
    if not now or before:
        return None
    item = event.object_attributes
    subject = kind(**_fields(event.project, item, {}), url=item.url, label=sorted(now)[0])
    return _trigger(event.user, event.project, subject, None)


def on_pipeline(event: PipelineEvent, policy: Policy) -> Trigger | None:
    """A failed pipeline of a merge request from one of the bot's branches: its first failed
    job that may not fail. The opt-in and the bounds are the worker's to check."""
    pipeline, request = event.object_attributes, event.merge_request
    if pipeline.status != "failed" or request is None:
        return None
    branch = request.source_branch or ""
    failed = next((j for j in event.builds if j.status == "failed" and not j.allow_failure), None)
    if not branch.startswith(BOT_BRANCH_PREFIX) or failed is None:
        return None
    check = FailedCheck(
        name=failed.name,
        head_sha=pipeline.sha,
        branch=branch,
        conclusion="failed",
        url=pipeline.url,
        check_id=failed.id,
        pipeline_id=pipeline.id,
    )
    item = request.model_copy(update={"title": f"Fix the failing job {failed.name}"})
    subject = CiFailure(**_fields(event.project, item, {}), url=request.url, check=check)
    trigger = _trigger(event.user, event.project, subject, build_fix_task(check))
    return replace(trigger, ci_branch=branch)


def on_push(event: PushEvent, policy: Policy) -> Trigger | None:
    """A push to the project's default branch: the bot's merge requests on it may no longer
    merge cleanly. Whether the project opted in (`conflicts: fix`) is the worker's to check;
    any other push (a branch, a deletion) is nothing, before any call to GitLab."""
    project = event.project
    branch = project.default_branch
    if event.after == _DELETED or not branch or event.ref != f"refs/heads/{branch}":
        return None
    subject = BasePushed(
        repo=_repository(project),
        reach={"project_id": project.id},
        url=project.web_url,
        part={"web_url": project.web_url},
        push=BasePush(branch=branch, sha=event.after, config_touched=_touches_config(event)),
    )
    return Trigger(
        task=f"Update my merge requests on `{branch}` that no longer merge cleanly.",
        sender=event.user.as_sender(),
        conversation_key=f"gitlab:{project.path_with_namespace}@{branch}",
        repo=project.path_with_namespace,
        subject=subject,
        bot_branches=True,
    )


def _touches_config(event: PushEvent) -> bool | None:
    """Whether the push changed `.resolver/config.yml`: known only when the payload lists every
    pushed commit (GitLab lists at most 20 of `total_commits_count`)."""
    commits = event.commits
    if commits is None:
        return None
    changed = [(*c.added, *c.modified, *c.removed) for c in commits]
    return touches_config(changed, event.total_commits_count == len(commits))


def _repository(project: Project) -> Repository:
    return Repository(
        full_name=project.path_with_namespace,
        clone_url=project.git_http_url,
        default_branch=project.default_branch,
    )


def _fields(project: Project, item: Noteable, part: JsonObject) -> dict[str, Any]:
    """What every trigger on an issue or a merge request has (the branches: a merge
    request's)."""
    return {
        "repo": _repository(project),
        "reach": {"project_id": project.id},
        "part": {**part, "web_url": project.web_url},
        "number": item.iid,
        "title": item.title,
        "body": item.description or "",
        "head_ref": item.source_branch,
        "base_ref": item.target_branch,
    }


def _trigger(user: User, project: Project, subject: OnForge, request: str | None) -> Trigger:
    """The job request; without a request text, the issue or MR itself is the task."""
    sign = "#" if isinstance(subject, ForgeIssue) else "!"
    title, body = subject.title or "", subject.body or ""
    return Trigger(
        task=request or f"{title}\n\n{body}".strip(),
        sender=user.as_sender(),
        conversation_key=f"gitlab:{project.path_with_namespace}{sign}{subject.number}",
        repo=project.path_with_namespace,
        subject=subject,
    )


_JSON: Final[TypeAdapter[JsonValue]] = TypeAdapter(JsonValue)
"""Built once: building an adapter costs about a millisecond, ten times the rest of a route."""


def _json(value: object) -> JsonValue:
    """A loosely typed payload field (a diff position) as JSON."""
    return _JSON.validate_python(value)


ROUTES: Final[dict[str, Route[Any]]] = {
    "Note Hook": Route(NoteEvent, on_note),
    "Confidential Note Hook": Route(NoteEvent, on_note),
    "Issue Hook": Route(WorkItemEvent, on_issue),
    "Confidential Issue Hook": Route(WorkItemEvent, on_issue),
    "Merge Request Hook": Route(MergeRequestEvent, on_merge_request),  # and auto-reviews
    "Pipeline Hook": Route(PipelineEvent, on_pipeline),
    "Push Hook": Route(PushEvent, on_push),
}

IGNORED: Final = frozenset(
    {
        "Tag Push Hook",
        "Job Hook",
        "Deployment Hook",
        "Release Hook",
        "Wiki Page Hook",
        "Emoji Hook",
        "Milestone Hook",
        "Feature Flag Hook",
        "Member Hook",
        "Subgroup Hook",
        "Project Hook",
        "Resource Access Token Hook",
        "Vulnerability Hook",
        "System Hook",
    }
)
