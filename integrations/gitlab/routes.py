"""GitLab events we act on, the ones we deliberately ignore, and their handlers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from integrations.gitlab.events import (
    Noteable,
    NoteEvent,
    PipelineEvent,
    Project,
    PushEvent,
    User,
    WorkItemEvent,
)
from resolver.contract.ci import BOT_BRANCH_PREFIX, CI_KEY, FailedCheck, build_fix_task
from resolver.contract.conflicts import BASE_PUSH_KEY, BasePush
from resolver.contract.inbound import Policy, Route, Trigger
from resolver.contract.mentions import mentions

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
    extra = {
        "note_id": note.id,
        "note_type": note.type,
        "discussion_id": note.discussion_id,
        "position": note.position,
        "line_code": note.line_code,
        "url": note.url,
    }
    trigger = _trigger(
        event.user, event.project, _KINDS[note.noteable_type], target, request, extra
    )
    if note.type in _THREAD_NOTES and (target.source_branch or "").startswith(BOT_BRANCH_PREFIX):
        # A mention in a thread of the bot's own merge request: its job takes every unresolved
        # discussion (`worker.reviews`). GitLab gives the notes of one review no common id, so
        # a mention while the batch runs joins it (steering); any other is a job of its own,
        # which leaves out the threads the bot answered last.
        # Its status goes to the merge request, not into the mention's thread (the bot speaking
        # last there would count the thread as answered); each thread gets its own reply.
        batch = {
            "review_batch": True,
            "discussion_id": None,
            "mention_discussion": note.discussion_id,
        }
        return replace(trigger, context={**trigger.context, **batch})
    return trigger


def on_issue(event: WorkItemEvent, policy: Policy) -> Trigger | None:
    """The trigger label was newly added to an issue."""
    return _on_labels(event, policy, "issue")


def on_merge_request(event: WorkItemEvent, policy: Policy) -> Trigger | None:
    """The trigger label was newly added to a merge request."""
    return _on_labels(event, policy, "merge_request")


def _on_labels(event: WorkItemEvent, policy: Policy, kind: str) -> Trigger | None:
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
    extra = {"label": sorted(now)[0], "url": item.url}
    return _trigger(event.user, event.project, kind, item, None, extra)


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
    extra = {"url": request.url, CI_KEY: check.as_context()}
    trigger = _trigger(
        event.user, event.project, "merge_request", item, build_fix_task(check), extra
    )
    return replace(trigger, ci_branch=branch)


def on_push(event: PushEvent, policy: Policy) -> Trigger | None:
    """A push to the project's default branch: the bot's merge requests on it may no longer
    merge cleanly. Whether the project opted in (`conflicts: fix`) is the worker's to check;
    any other push (a branch, a deletion) is nothing, before any call to GitLab."""
    project = event.project
    branch = project.default_branch
    if event.after == _DELETED or not branch or event.ref != f"refs/heads/{branch}":
        return None
    push = BasePush(branch=branch, sha=event.after)
    context = {
        "repo": project.path_with_namespace,
        "project_id": project.id,
        "clone_url": project.git_http_url,
        "default_branch": branch,
        "web_url": project.web_url,
        "url": project.web_url,
        BASE_PUSH_KEY: push.as_context(),
    }
    return Trigger(
        task=f"Update my merge requests on `{branch}` that no longer merge cleanly.",
        sender=event.user.as_sender(),
        conversation_key=f"gitlab:{project.path_with_namespace}@{branch}",
        repo=project.path_with_namespace,
        context=context,
        bot_branches=True,
    )


def _trigger(
    user: User,
    project: Project,
    kind: str,
    item: Noteable,
    request: str | None,
    extra: dict[str, Any],
) -> Trigger:
    """The job request; without a request text, the issue or MR itself is the task."""
    sign = "!" if kind == "merge_request" else "#"
    context = {
        "repo": project.path_with_namespace,
        "project_id": project.id,
        "clone_url": project.git_http_url,
        "default_branch": project.default_branch,
        "web_url": project.web_url,
        "noteable_type": kind,
        "iid": item.iid,
        "title": item.title,
        "body": item.description or "",
        "source_branch": item.source_branch,
        "target_branch": item.target_branch,
        **extra,
    }
    return Trigger(
        task=request or f"{item.title}\n\n{item.description or ''}".strip(),
        sender=user.as_sender(),
        conversation_key=f"gitlab:{project.path_with_namespace}{sign}{item.iid}",
        repo=project.path_with_namespace,
        context=context,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "Note Hook": Route(NoteEvent, on_note),
    "Confidential Note Hook": Route(NoteEvent, on_note),
    "Issue Hook": Route(WorkItemEvent, on_issue),
    "Confidential Issue Hook": Route(WorkItemEvent, on_issue),
    "Merge Request Hook": Route(WorkItemEvent, on_merge_request),
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
