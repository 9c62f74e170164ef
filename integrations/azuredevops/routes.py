"""Azure DevOps events we act on, the ones we deliberately ignore, and their handlers.

Azure Repos: a comment mentioning the bot in a pull request's thread, a pull request opened
with a mention in its description or the trigger label, the trigger label on a pull request,
and a push to a default branch (`conflicts: fix`). Azure Boards: a comment mentioning the bot
on a work item, and a work item newly tagged with the trigger label or assigned to the bot;
a work item names no repository, so it routes like a Jira ticket (inline `repo=`, a default
per project, else a question).
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pydantic import ValidationError

from integrations.azuredevops.events import (
    BuildEvent,
    Identity,
    PullCommentEvent,
    PullEvent,
    PushEvent,
    WorkItem,
    WorkItemCommentEvent,
    WorkItemUpdateEvent,
)
from integrations.azuredevops.events import PullRequest as PullPayload
from integrations.azuredevops.events import Repository as RepoPayload
from resolver.contract.commands import parse_command
from resolver.contract.inbound import MalformedError, Policy, Route, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.triggers import (
    BOT_BRANCH_PREFIX,
    BasePush,
    BasePushed,
    CiFailure,
    FailedCheck,
    JsonObject,
    OnPull,
    PullRequest,
    Repository,
    ReviewBatch,
    TrackerTicket,
)
from resolver.features.ci.contract import build_fix_task
from resolver.features.review_requests.contract import asks_for_review

NAME: Final = "azuredevops"
_TAG: Final = re.compile(r"<[^>]+>")
_REPO_OPTION: Final = re.compile(r"(?:^|\s)repo=(\S+)")
_DELETED: Final = "0" * 40
REVIEW_WINDOW: Final = timedelta(seconds=60)
"""Azure Repos sends no review, only each comment as it is published: the mentions one person
writes on the bot's pull request within one window of this length are one review batch."""
GATHER_GRACE: Final = timedelta(seconds=5)
"""Added to the window's end before its job reads the threads: Azure DevOps's clock and the
delivery's lag."""


_NUMBER: Final = re.compile(r"[0-9]{1,9}")
"""A pull request's number as a build names it: ASCII digits that fit the database's key."""
_LATEST_PUBLISHED: Final = datetime(9000, 1, 1, tzinfo=UTC)
"""Later than any real comment, early enough that its review window's end is a date."""


def plain_text(markup: object) -> str:
    """A work item's HTML comment as text: tags dropped, entities decoded (a mention is an
    `<a data-vss-mention>` around `@Name`); a field that is not text has none."""
    return html.unescape(_TAG.sub(" ", markup)).strip() if isinstance(markup, str) else ""


def repo_option(text: str) -> tuple[str, str | None]:
    """`repo=Project/Repo` written inline, split from the request."""
    found = _REPO_OPTION.search(text)
    if found is None:
        return text, None
    return (text[: found.start()] + text[found.end() :]).strip(), found.group(1)


def on_pull_comment(event: PullCommentEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a comment in a pull request's thread; on the bot's own pull request, one
    review batch of its author's mentions in a minute (commands and review requests aside)."""
    comment, pull = event.resource.comment, event.resource.pullRequest
    request = mentions(comment.content, policy.bot_name)
    if request is None:
        return None
    part: JsonObject = {"repository_id": pull.repository.id, "thread_id": comment.thread_id}
    published = comment.publishedDate
    if published is not None and _is_bots(pull, policy) and _asks_for_work(request):
        return _review_batch(event, part, request, published)
    subject = _pull(pull, comment_id=comment.id, part=part)
    trigger = _trigger(comment.author, pull, subject, request)
    return replace(trigger, once_key=f"comment:{pull.repository.id}:{comment.id}")


def _is_bots(pull: PullPayload, policy: Policy) -> bool:
    """The bot's own pull request: from one of its branches, or opened by it."""
    author = pull.createdBy.as_sender().login if pull.createdBy else None
    return (pull.head or "").startswith(BOT_BRANCH_PREFIX) or policy.is_bot_login(author)


def _asks_for_work(request: str) -> bool:
    """Neither a command (`stop`, `rebase`: each is answered alone, at once) nor a request for
    a review (a review job of its own)."""
    return parse_command(request) is None and not asks_for_review(request)


def _review_batch(
    event: PullCommentEvent, part: JsonObject, request: str, published: datetime
) -> Trigger:
    """A mention on the bot's pull request: its job takes every open thread (`reviews.worker`),
    and the mentions its author publishes in the same window (`REVIEW_WINDOW`, by Azure
    DevOps's published time, which a redelivery keeps) share its delivery row, so they are that
    one job. It reads the threads once the window has closed (`gather_until`: any comment of
    the window was published by then); a mention of the next window joins it while it runs
    (steering) or follows it."""
    comment, pull = event.resource.comment, event.resource.pullRequest
    if published.tzinfo is None:
        published = published.replace(tzinfo=UTC)
    if published > _LATEST_PUBLISHED:
        raise MalformedError(f"comment published in the year {published.year}")
    window = int(published.timestamp() // REVIEW_WINDOW.total_seconds())
    until = published + REVIEW_WINDOW + GATHER_GRACE
    subject = _pull(pull, kind=ReviewBatch, comment_id=comment.id, part=part, gather_until=until)
    trigger = _trigger(comment.author, pull, subject, request)
    once = f"review:{pull.repository.id}#{pull.pullRequestId}:{comment.author.id}:{window}"
    return replace(trigger, once_key=once)


def on_pull_created(event: PullEvent, policy: Policy) -> Trigger | None:
    """A pull request opened with `@bot …` in its description, or with the trigger label."""
    pull = event.resource
    request = mentions(pull.description, policy.bot_name)
    if request is not None and pull.createdBy is not None:
        return _trigger(pull.createdBy, pull, _pull(pull), request)
    return on_pull_updated(event, policy)


def on_pull_updated(event: PullEvent, policy: Policy) -> Trigger | None:
    """The pull request carries the trigger label: itself is the task, once (an update says
    what it is now, not what changed)."""
    pull = event.resource
    label = next(
        (x.name for x in pull.labels or [] if x.active and policy.is_trigger_label(x.name)), None
    )
    if label is None or pull.createdBy is None:
        return None
    trigger = _trigger(pull.createdBy, pull, _pull(pull, label=label), None)
    return replace(trigger, once_key=f"label:{pull.repository.id}#{pull.pullRequestId}")


def on_push(event: PushEvent, policy: Policy) -> Trigger | None:
    """A push to the repository's default branch: the bot's pull requests on it may no longer
    merge cleanly (whether the repository opted in is the worker's to check)."""
    push = event.resource
    repo, branch = push.repository, push.repository.default_branch
    update = next((u for u in push.refUpdates if u.name == f"refs/heads/{branch}"), None)
    if not branch or update is None or update.newObjectId == _DELETED:
        return None
    subject = BasePushed(
        repo=_repository(repo),
        url=repo.webUrl,
        push=BasePush(branch=branch, sha=update.newObjectId),
    )
    return Trigger(
        task=f"Update my pull requests on `{branch}` that no longer merge cleanly.",
        sender=push.pushedBy.as_sender(),
        conversation_key=f"{NAME}:{repo.full_name}@{branch}",
        repo=repo.full_name,
        subject=subject,
        bot_branches=True,
        once_key=f"push:{repo.id}:{update.name}:{update.newObjectId}",
    )


def on_build_completed(event: BuildEvent, policy: Policy) -> Trigger | None:
    """A failed validation build of a pull request from one of the bot's branches: it follows
    up the job that pushed the branch (the opt-in and the bounds are the worker's to check)."""
    build = event.resource
    info = build.triggerInfo
    branch = (info.get("pr.sourceBranch") or build.sourceBranch).removeprefix("refs/heads/")
    number = info.get("pr.number", "")
    if build.result != "failed" or not branch.startswith(BOT_BRANCH_PREFIX):
        return None
    if not _NUMBER.fullmatch(number) or not build.repository.name:
        return None
    web = build.links["web"].href if "web" in build.links else None
    check = FailedCheck(
        name=build.definition.name or f"build {build.id}",
        head_sha=build.sourceVersion,
        branch=branch,
        conclusion="failed",
        url=web,
        check_id=build.id,
    )
    full_name = f"{build.project.name}/{build.repository.name}"
    subject = CiFailure(
        repo=Repository(full_name=full_name),
        number=int(number),
        title=f"Fix the failing build {check.name}",
        url=web,
        head_ref=branch,
        head_sha=build.sourceVersion,
        part={"repository_id": build.repository.id},
        check=check,
    )
    requester = build.requestedFor or Identity(id="", displayName="Azure Pipelines")
    return Trigger(
        task=build_fix_task(check),
        sender=requester.as_sender(),
        conversation_key=f"{NAME}:{full_name}!{number}",
        repo=full_name,
        subject=subject,
        ci_branch=branch,
        once_key=f"build:{build.project.id}:{build.id}",
    )


def on_work_item_commented(event: WorkItemCommentEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a comment on a work item (its newest `System.History`)."""
    item = event.resource
    author = _identity(item.fields.get("System.ChangedBy"))
    request = mentions(plain_text(item.fields.get("System.History")), policy.bot_name)
    if request is None or author is None:
        return None
    request, repo = repo_option(request)
    trigger = _ticket(item, author, request, repo=repo)
    return replace(trigger, once_key=f"wi-comment:{item.id}:{item.rev}")


def on_work_item_updated(event: WorkItemUpdateEvent, policy: Policy) -> Trigger | None:
    """The trigger label newly among the work item's tags, or the bot newly assigned."""
    update = event.resource
    tags = update.fields.get("System.Tags") or {}
    before = _tags(tags.get("oldValue")) if isinstance(tags, dict) else []
    after = _tags(tags.get("newValue")) if isinstance(tags, dict) else []
    label = next((t for t in after if policy.is_trigger_label(t)), None)
    if label is not None and not any(policy.is_trigger_label(t) for t in before):
        return _ticket(update.revision, update.revisedBy, None, label=label)
    assigned = update.fields.get("System.AssignedTo") or {}
    new = _identity(assigned.get("newValue")) if isinstance(assigned, dict) else None
    if new is not None and policy.is_bot_login(new.as_sender().login):
        return _ticket(update.revision, update.revisedBy, None)
    return None


def _identity(value: object) -> Identity | None:
    """An identity field: an `IdentityRef` object. The old `Name <address>` string form names
    no stable id, so it is not trusted to be anyone."""
    if not isinstance(value, dict) or "id" not in value:
        return None
    try:
        return Identity.model_validate(value)
    except ValidationError:  # a field of the wrong type names no one
        return None


def _tags(value: object) -> list[str]:
    return [t.strip() for t in value.split(";") if t.strip()] if isinstance(value, str) else []


def _repository(repo: RepoPayload) -> Repository:
    return Repository(
        full_name=repo.full_name, clone_url=repo.remoteUrl, default_branch=repo.default_branch
    )


def _pull(
    pull: PullPayload, kind: type[PullRequest | ReviewBatch] = PullRequest, **extra: Any
) -> PullRequest | ReviewBatch:
    part = extra.pop("part", {"repository_id": pull.repository.id})
    url = (
        f"{pull.repository.webUrl}/pullrequest/{pull.pullRequestId}"
        if pull.repository.webUrl
        else None
    )
    return kind(
        repo=_repository(pull.repository),
        number=pull.pullRequestId,
        title=pull.title,
        body=pull.description or "",
        url=url,
        head_ref=pull.head,
        head_sha=pull.lastMergeSourceCommit.commitId if pull.lastMergeSourceCommit else None,
        base_ref=pull.base,
        part=part,
        **extra,
    )


def _trigger(sender: Identity, pull: PullPayload, subject: OnPull, request: str | None) -> Trigger:
    repo = pull.repository
    title, body = subject.title or "", subject.body or ""
    return Trigger(
        task=request or f"{title}\n\n{body}".strip(),
        sender=sender.as_sender(),
        conversation_key=f"{NAME}:{repo.full_name}!{pull.pullRequestId}",
        repo=repo.full_name,
        subject=subject,
    )


def _ticket(
    item: WorkItem,
    sender: Identity,
    request: str | None,
    *,
    repo: str | None = None,
    label: str | None = None,
) -> Trigger:
    """A work item as a tracker ticket: its project is the route scope."""
    fields = item.fields
    title = str(fields.get("System.Title") or "")
    body = plain_text(fields.get("System.Description"))
    project = str(fields.get("System.TeamProject") or "")
    part: JsonObject = {"project": project or None, "work_item": item.id}
    subject = TrackerTicket(
        key=str(item.id), title=title, body=body, url=item.url, label=label, part=part
    )
    return Trigger(
        task=request or f"{title}\n\n{body}".strip(),
        sender=sender.as_sender(),
        conversation_key=f"{NAME}:{project}#{item.id}",
        repo=repo,
        subject=subject,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "ms.vss-code.git-pullrequest-comment-event": Route(PullCommentEvent, on_pull_comment),
    "git.pullrequest.created": Route(PullEvent, on_pull_created),
    "git.pullrequest.updated": Route(PullEvent, on_pull_updated),
    "git.push": Route(PushEvent, on_push),
    "build.complete": Route(BuildEvent, on_build_completed),
    "workitem.commented": Route(WorkItemCommentEvent, on_work_item_commented),
    "workitem.updated": Route(WorkItemUpdateEvent, on_work_item_updated),
}

# The other events of the `tfs` publisher a subscription could send.
IGNORED: Final = frozenset(
    {
        "git.pullrequest.merged",
        "git.repo.created",
        "git.repo.deleted",
        "git.repo.forked",
        "git.repo.renamed",
        "git.repo.statuschanged",
        "ms.vss-release.deployment-completed-event",
        "tfvc.checkin",
        "workitem.created",
        "workitem.deleted",
        "workitem.restored",
    }
)
