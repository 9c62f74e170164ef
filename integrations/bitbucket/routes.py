"""Bitbucket events we act on, the ones we deliberately ignore, and their handlers.

Cloud (`pullrequest:*`, `repo:*`) and Data Center (`pr:*`, `repo:refs_changed`) name their
events apart, so one table serves both. Data Center's are verified, parsed and validated, and
what would be a job is refused with its reason in the log (`webhook.bitbucket.
data_center_refused`): the client speaks Cloud's REST API only, so nothing could answer it.
Bitbucket's conversations are its pull requests' comments (its issue tracker is a minor case,
and Jira tickets route through the Jira provider). Two quirks shape the handlers: a push
payload does not say which branch is the repository's main one, and every hook (a
repository's and a workspace's) sends its own request id, so a comment or a push is keyed by
itself.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, Final

from integrations.bitbucket.events import (
    Account,
    CommentEvent,
    CommitStatusEvent,
    Envelope,
    PullRequestEvent,
    PushEvent,
    ServerCommentEvent,
    ServerPushEvent,
)
from integrations.bitbucket.events import PullRequest as PullPayload
from integrations.bitbucket.review_routes import on_pull_changed
from integrations.bitbucket.trigger import UNKNOWN_PULL
from resolver.contract.inbound import Policy, Route, Sender, Trigger
from resolver.contract.mentions import find_request, mentions
from resolver.contract.triggers import (
    BOT_BRANCH_PREFIX,
    BasePush,
    BasePushed,
    CiFailure,
    FailedCheck,
    JsonObject,
    PullRequest,
    Repository,
    ReviewBatch,
)
from resolver.core.logs import log
from resolver.features.ci.contract import build_fix_task

logger = logging.getLogger(__name__)

NAME: Final = "bitbucket"
DATA_CENTER_REFUSED: Final = (
    "Bitbucket Data Center is not answered: Resolver speaks Bitbucket Cloud's REST API 2.0, "
    "not Data Center's REST API 1.0, so no job is made"
)
REVIEW_TASK: Final = "Address the review: every open comment thread on this pull request."
_DELETED: Final = "0" * 40
_BUILD_NUMBER: Final = re.compile(r"/results/([0-9]{1,9})(?:[/?#]|$)|#([0-9]{1,9})\b")


@lru_cache(maxsize=16)
def mention_pattern(bot_name: str, account_ids: frozenset[str]) -> re.Pattern[str]:
    """`@bot_name` as a word, or the bot's account as Bitbucket Cloud's editor writes a mention
    it completed in the raw text: `@{account_id}` (`@{557058:…}`; GitLab's Bitbucket Cloud
    importer reads them so, gitlab-org/gitlab!144923), or `@{uuid}` (the uuid without its own
    braces). `account_ids` are RESOLVER_BOT_ACCOUNT_IDS."""
    ids = sorted({i.strip("{}") for i in account_ids if i.strip("{}")}, key=len, reverse=True)
    name = rf"{re.escape(bot_name)}(?![\w-])"
    accounts = rf"|\{{(?:{'|'.join(map(re.escape, ids))})\}}" if ids else ""
    return re.compile(rf"(?<![\w@./+-])@(?:{name}{accounts})", re.I)


def _mention(text: str | None, policy: Policy) -> str | None:
    return find_request(text, mention_pattern(policy.bot_name, policy.bot_account_ids))


def on_comment_created(event: CommentEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a new comment on a pull request, on its conversation or on a line; by name
    or by the bot's account, as the editor's completion writes it."""
    request = _mention(event.comment.text, policy)
    if request is None:
        return None
    comment = event.comment
    part: JsonObject = {}
    if comment.inline is not None:
        part["inline_path"] = comment.inline.path
    if comment.parent is not None:
        part["parent_id"] = comment.parent.id
    url = comment.links.html.href if comment.links and comment.links.html else None
    subject = PullRequest(
        **_on_pull(event, event.pullrequest), url=url, comment_id=comment.id, part=part
    )
    trigger = _trigger(event.actor.as_sender(), event.repository.full_name, subject, request)
    return replace(trigger, once_key=f"comment:{event.repository.full_name}:{comment.id}")


def on_pull_created(event: PullRequestEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a new pull request's description (a person's request comes first); else an
    auto-review (`review_routes.py`)."""
    pull = event.pullrequest
    request = _mention(pull.description, policy)
    if request is None:
        return on_pull_changed(event, policy)
    subject = PullRequest(**_on_pull(event, pull), url=_pull_url(pull))
    trigger = _trigger(event.actor.as_sender(), event.repository.full_name, subject, request)
    return replace(trigger, once_key=f"pull:{event.repository.full_name}#{pull.id}")


def on_changes_requested(event: PullRequestEvent, policy: Policy) -> Trigger | None:
    """Changes requested on a pull request the bot opened, by someone else: one job for all
    of its open comment threads."""
    pull = event.pullrequest
    if not _is_bot(pull.author, policy) or _is_bot(event.actor, policy):
        return None
    subject = ReviewBatch(**_on_pull(event, pull), url=_pull_url(pull))
    return _trigger(event.actor.as_sender(), event.repository.full_name, subject, REVIEW_TASK)


def on_commit_status(event: CommitStatusEvent, policy: Policy) -> Trigger | None:
    """A failed build on one of the bot's branches (a status that names its branch, as
    Bitbucket Pipelines' do): a fix on the bot's pull request from that branch. The opt-in and
    the bounds are the worker's to check."""
    status = event.commit_status
    branch, sha = status.refname or "", status.commit
    if status.state != "FAILED" or not branch.startswith(BOT_BRANCH_PREFIX) or not sha:
        return None
    name = status.name or status.key
    check = FailedCheck(
        name=name,
        head_sha=sha,
        branch=branch,
        conclusion="failed",
        url=status.url,
        pipeline_id=build_number_of(status.url, status.name),
        title=name,
        summary=status.description,
    )
    full_name = event.repository.full_name
    subject = CiFailure(
        repo=_repository(event),
        number=UNKNOWN_PULL,
        title=f"Fix the failing check {name}",
        head_ref=branch,
        head_sha=sha,
        url=status.url,
        check=check,
    )
    trigger = Trigger(
        task=build_fix_task(check),
        sender=event.actor.as_sender(),
        conversation_key=f"{NAME}:{full_name}@{branch}",
        repo=full_name,
        subject=subject,
        once_key=f"status:{full_name}:{sha}:{status.key}",
    )
    return replace(trigger, ci_branch=branch)


def build_number_of(url: str | None, name: str | None) -> int | None:
    """The build number a Pipelines status names: its link ends `…/results/42`, its name is
    `Pipeline #42 for <branch>`; None for another CI's status."""
    for text in (url, name):
        found = _BUILD_NUMBER.search(text or "")
        if found:
            return int(found.group(1) or found.group(2))
    return None


def on_push(event: PushEvent, policy: Policy) -> Trigger | None:
    """A push to a branch that may be the base of the bot's pull requests (`conflicts: fix`):
    the payload does not name the main branch, so any branch but the bot's own is a candidate,
    and the worker finds the bot's pull requests into it (none: nothing happens). A tag, a
    deletion, or a push to a branch other than the main one named in the payload is nothing."""
    repo = event.repository
    main = repo.mainbranch.name if repo.mainbranch else None
    for change in event.push.changes:
        new = change.new
        if change.closed or new is None or new.type != "branch" or new.target is None:
            continue
        if new.name.startswith(BOT_BRANCH_PREFIX) or (main and new.name != main):
            continue
        return _base_push(event.actor.as_sender(), repo.full_name, new.name, new.target.hash)
    return None


def on_server_comment(event: ServerCommentEvent, policy: Policy) -> None:
    """Data Center: `@bot …` in a new pull request comment is refused with its reason logged,
    and no job (Resolver speaks Cloud's REST API only)."""
    repo = event.pullRequest.toRef.repository
    if mentions(event.comment.text, policy.bot_name) is not None and repo is not None:
        where = f"{repo.full_name}#{event.pullRequest.id}"
        _refused(logging.WARNING, "pr:comment:added", where, event.actor.as_sender())


def on_server_push(event: ServerPushEvent, policy: Policy) -> None:
    """Data Center: a branch updated (not created or deleted) that is not the bot's own is
    refused with its reason logged, and no job (Resolver speaks Cloud's REST API only)."""
    repo = event.repository
    for change in event.changes:
        branch = change.ref.displayId or change.ref.id.removeprefix("refs/heads/")
        if change.type != "UPDATE" or not change.ref.id.startswith("refs/heads/"):
            continue
        if branch.startswith(BOT_BRANCH_PREFIX) or change.toHash == _DELETED:
            continue
        where = f"{repo.full_name}@{branch}"
        _refused(logging.INFO, "repo:refs_changed", where, event.actor.as_sender())
        return


def _refused(level: int, key: str, where: str, sender: Sender) -> None:
    """A Data Center event that would be a job, refused before intake: nothing could answer it
    (no status comment, no pull request), so the log says why instead."""
    log(
        logger,
        level,
        "webhook.bitbucket.data_center_refused",
        key=key,
        where=where,
        sender=sender.login or sender.external_id,
        why=DATA_CENTER_REFUSED,
    )


def _is_bot(account: Account | None, policy: Policy) -> bool:
    if account is None:
        return False
    return account.uuid in policy.bot_account_ids or policy.is_bot_login(account.nickname)


def _pull_url(pull: PullPayload) -> str | None:
    return pull.links.html.href if pull.links and pull.links.html else None


def _repository(event: Envelope) -> Repository:
    repo = event.repository
    main = repo.mainbranch.name if repo.mainbranch else None
    return Repository(full_name=repo.full_name, default_branch=main)


def _on_pull(event: Envelope, pull: PullPayload) -> dict[str, Any]:
    """What every trigger on a Cloud pull request has."""
    source, destination = pull.source, pull.destination
    return {
        "repo": _repository(event),
        "number": pull.id,
        "title": pull.title,
        "body": pull.description or "",
        "head_ref": source.branch.name if source and source.branch else None,
        "head_sha": source.commit.hash if source and source.commit else None,
        "base_ref": destination.branch.name if destination and destination.branch else None,
    }


def _base_push(sender: Sender, full_name: str, branch: str, sha: str) -> Trigger:
    subject = BasePushed(
        repo=Repository(full_name=full_name), push=BasePush(branch=branch, sha=sha)
    )
    return Trigger(
        task=f"Update my pull requests on `{branch}` that no longer merge cleanly.",
        sender=sender,
        conversation_key=f"{NAME}:{full_name}@{branch}",
        repo=full_name,
        subject=subject,
        bot_branches=True,
        once_key=f"push:{full_name}:refs/heads/{branch}:{sha}",
    )


def _trigger(
    sender: Sender, full_name: str, subject: PullRequest | ReviewBatch, request: str
) -> Trigger:
    return Trigger(
        task=request,
        sender=sender,
        conversation_key=f"{NAME}:{full_name}#{subject.number}",
        repo=full_name,
        subject=subject,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "pullrequest:comment_created": Route(CommentEvent, on_comment_created),
    "pullrequest:created": Route(PullRequestEvent, on_pull_created),
    "pullrequest:updated": Route(PullRequestEvent, on_pull_changed),  # auto-reviews
    "pullrequest:changes_request_created": Route(PullRequestEvent, on_changes_requested),
    "repo:push": Route(PushEvent, on_push),
    "repo:commit_status_updated": Route(CommitStatusEvent, on_commit_status),
    "pr:comment:added": Route(ServerCommentEvent, on_server_comment),
    "repo:refs_changed": Route(ServerPushEvent, on_server_push),
}

# Cloud's event keys (its event payloads page) and Data Center's (its event payload page).
IGNORED: Final = frozenset(
    {
        "pullrequest:approved",
        "pullrequest:unapproved",
        "pullrequest:fulfilled",
        "pullrequest:rejected",
        "pullrequest:comment_updated",
        "pullrequest:comment_deleted",
        "pullrequest:comment_resolved",
        "pullrequest:comment_reopened",
        "pullrequest:changes_request_removed",
        "repo:fork",
        "repo:updated",
        "repo:transfer",
        "repo:commit_comment_created",
        "repo:commit_status_created",
        "issue:created",
        "issue:updated",
        "issue:comment_created",
        "diagnostics:ping",
        "pr:opened",
        "pr:modified",
        "pr:from_ref_updated",
        "pr:merged",
        "pr:declined",
        "pr:deleted",
        "pr:comment:edited",
        "pr:comment:deleted",
        "pr:reviewer:approved",
        "pr:reviewer:unapproved",
        "pr:reviewer:needs_work",
        "repo:modified",
        "repo:forked",
    }
)
