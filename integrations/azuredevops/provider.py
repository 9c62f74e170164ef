"""Azure DevOps as a conversation (a pull request's threads, or a work item's comments) and as
a forge (Azure Repos). The descriptor's `conversation` and `forge` read the repository, the
number and the thread from the job's trigger and build them with the bot's client."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import JsonValue

from integrations.azuredevops.client import ERRORS, AzureDevOpsClient, TokenProvider, authorization
from integrations.azuredevops.settings import AzureDevOpsSettings
from integrations.azuredevops.tokens import JobToken, organisation
from integrations.azuredevops.trigger import part_of
from integrations.toolkit.answers import reading
from integrations.toolkit.git import repository_header_env
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import (
    Comment,
    Conversation,
    Forge,
    ForgeUser,
    History,
    PullInfo,
    RepoInfo,
    ReviewThread,
    has_hidden_tag,
    tag_of,
    with_hidden_tag,
)
from resolver.contract.provider import CIReport
from resolver.contract.triggers import (
    FailedCheck,
    TaskTrigger,
    TrackerTicket,
    comment_of,
    number_of,
    repo_of,
)
from resolver.core.settings import Settings
from resolver.features.ci.contract import LOG_READ_BYTES, LOG_TAIL_CHARS, tail

HISTORY_LIMIT: Final = 50
# Azure Repos takes a PAT as the password of any user name; `git http-backend` (Azure DevOps
# Server's own front aside) lets a push through only with a user name, so one is sent.
GIT_USER: Final = "resolver"
THREAD: Final = "thread"
WORK_ITEM: Final = "work_item"
# A resolved thread's statuses (`fixed`, `wontFix`, `closed`, `byDesign`, or their numbers);
# any other (`active`, `pending`, none) waits for someone.
# https://learn.microsoft.com/rest/api/azure/devops/git/pull-request-threads/list#commentthreadstatus
RESOLVED_THREADS: Final = frozenset({"fixed", "wontFix", "closed", "byDesign", 2, 3, 4, 5})
RESOLVED: Final = "fixed"


def _author(item: Mapping[str, Any]) -> str:
    who = item.get("author") or item.get("createdBy") or {}
    return str(who.get("uniqueName") or who.get("displayName") or "someone").split("@", 1)[0]


def by_bot(item: Mapping[str, Any], settings: Settings) -> bool:
    """Whether a comment is the bot's own: its author's identity id is one of
    `RESOLVER_BOT_ACCOUNT_IDS`, or its sign-in name is the bot's (`resolver@…`, as a mention
    and an assignment know the bot). A hidden tag alone proves nothing: anyone can paste one."""
    who = item.get("author") or item.get("createdBy") or {}
    ids = {i.strip() for i in settings.bot_account_ids.split(",") if i.strip()}
    if str(who.get("id") or "") in ids:
        return True
    login = str(who.get("uniqueName") or "").split("@", 1)[0]
    return bool(login) and login.lower() == settings.bot_name.lower()


class PullThreads:
    """A pull request's threads: the status is a thread of its own, edited in place; the
    comment that asked (`thread_id`, `comment_id`) is liked as the acknowledgement. Moved into
    one review thread (`reply_thread`), a message is a reply there."""

    def __init__(
        self,
        client: AzureDevOpsClient,
        repo: str,
        number: int,
        *,
        thread_id: int | None,
        comment_id: int | None,
        bot: Callable[[Mapping[str, Any]], bool],
        reply_thread: int | None = None,
    ) -> None:
        self._client, self._repo, self._number = client, repo, number
        self._thread_id, self._comment_id = thread_id, comment_id
        self._reply_thread, self._bot = reply_thread, bot

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        tagged = with_hidden_tag(text, tag)
        if self._reply_thread is not None:
            thread = self._reply_thread
            comment = self._client.reply(self._repo, self._number, thread, tagged)
        else:
            thread, comment = self._client.post_thread(self._repo, self._number, tagged)
        return {"kind": THREAD, "thread": thread, "id": comment, "tag": tag}

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """The bot's own comment with `tag` (one someone else pasted the tag into is not)."""
        for thread in reversed(self._client.threads(self._repo, self._number)):
            for comment in thread.get("comments") or []:
                content = str(comment.get("content") or "")
                if has_hidden_tag(content, tag) and self._bot(comment):
                    return {"kind": THREAD, "thread": thread["id"], "id": comment["id"], "tag": tag}
        return None

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        thread, comment = ref.get("thread"), ref.get("id")
        if not isinstance(thread, int) or not isinstance(comment, int):
            raise PermanentCallbackError("the status message reference has no thread and comment")
        self._client.edit_comment(
            self._repo, self._number, thread, comment, with_hidden_tag(text, tag_of(ref))
        )

    def acknowledge(self) -> None:
        if self._thread_id is not None and self._comment_id is not None:
            self._client.like(self._repo, self._number, self._thread_id, self._comment_id)

    def history(self) -> History:
        """The comments of the pull request's threads that are not the bot's (its tagged
        status threads), newest HISTORY_LIMIT, oldest first; and each thread with a person's
        comment as a review thread (`review_thread`)."""
        threads = [t for t in self._client.threads(self._repo, self._number) if _live(t)]
        comments = [
            Comment(_author(c), str(c.get("content") or ""))
            for thread in threads
            for c in _texts(thread)
            if not has_hidden_tag(str(c.get("content") or ""))
        ]
        reviews = (self._review_thread(t) for t in threads)
        return History(tuple(comments[-HISTORY_LIMIT:]), tuple(t for t in reviews if t.comments))

    def _review_thread(self, thread: Mapping[str, Any]) -> ReviewThread:
        """A thread as a review thread: its file and line (none for a general comment), the
        comments that are not the bot's, whether it is resolved (`RESOLVED_THREADS`), answered
        when the bot wrote last; a reply to it goes into it (`reply_thread`)."""
        texts = _texts(thread)
        context = thread.get("threadContext") or {}
        start = context.get("rightFileStart") or context.get("leftFileStart") or {}
        line = start.get("line") if isinstance(start, Mapping) else None
        path = str(context.get("filePath") or "").lstrip("/") or None
        return ReviewThread(
            path=path,
            line=line if isinstance(line, int) else None,
            comments=tuple(
                Comment(_author(c), str(c.get("content") or "")) for c in texts if not self._ours(c)
            ),
            resolved=thread.get("status") in RESOLVED_THREADS,
            id=str(thread["id"]),
            answered=bool(texts) and self._ours(texts[-1]),
            where=(("reply_thread", int(thread["id"])),),
        )

    def _ours(self, comment: Mapping[str, Any]) -> bool:
        return has_hidden_tag(str(comment.get("content") or "")) and self._bot(comment)


def _live(thread: Mapping[str, Any]) -> bool:
    return not thread.get("isDeleted") and isinstance(thread.get("id"), int)


def _texts(thread: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A thread's comments people and the bot wrote (not the system's), in order."""
    return [
        c
        for c in thread.get("comments") or []
        if c.get("commentType") in (None, "text", 1) and not c.get("isDeleted")
    ]


class WorkItemComments:
    """A work item's discussion (Azure Boards): the status is a comment, edited in place."""

    def __init__(self, client: AzureDevOpsClient, project: str, work_item: int) -> None:
        self._client, self._project, self._work_item = client, project, work_item

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        found = self._client.post_work_item_comment(
            self._project, self._work_item, with_hidden_tag(text, tag)
        )
        return {"kind": WORK_ITEM, "id": found, "tag": tag}

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        for item in reversed(self._client.work_item_comments(self._project, self._work_item)):
            if has_hidden_tag(str(item.get("text") or ""), tag):
                return {"kind": WORK_ITEM, "id": int(item["id"]), "tag": tag}
        return None

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        comment = ref.get("id")
        if not isinstance(comment, int):
            raise PermanentCallbackError("the status message reference has no comment id")
        self._client.edit_work_item_comment(
            self._project, self._work_item, comment, with_hidden_tag(text, tag_of(ref))
        )

    def acknowledge(self) -> None:
        """Nothing: the status comment, posted at once, is the acknowledgement."""

    def history(self) -> History:
        items = self._client.work_item_comments(self._project, self._work_item)
        comments = [
            Comment(_author(i), str(i.get("text") or ""))
            for i in items
            if not has_hidden_tag(str(i.get("text") or ""))
        ]
        return History(tuple(comments[-HISTORY_LIMIT:]))


class AzureRepos:
    """Repositories, permissions, git auth and pull requests, as the bot."""

    def __init__(self, client: AzureDevOpsClient, token: TokenProvider) -> None:
        self._client, self._token = client, token

    def repository(self, full_name: str) -> RepoInfo:
        return self._client.repository(full_name)

    def can_write(self, full_name: str, user: ForgeUser) -> bool:
        return self._client.can_contribute(full_name, user.external_id)

    def git_env(self, clone_url: str) -> dict[str, str]:
        return git_auth_env(clone_url, self._token())

    def find_open_pull(self, full_name: str, head: str) -> PullInfo | None:
        return self._client.find_open_pull(full_name, head)

    def get_pull(self, full_name: str, number: int) -> PullInfo:
        return self._client.get_pull(full_name, number)

    def open_draft_pull(
        self, full_name: str, head: str, base: str, title: str, body: str
    ) -> PullInfo:
        return self._client.open_draft_pull(full_name, head, base, title, body)

    def edit_pull_body(self, full_name: str, number: int, body: str) -> None:
        self._client.edit_pull_body(full_name, number, body)


def git_auth_env(clone_url: str, token: str) -> dict[str, str]:
    """Environment for host-side git that sends the token (Basic, or Bearer for an Entra
    token) to `clone_url`'s repository only."""
    header = authorization(token, user=GIT_USER)
    return repository_header_env(clone_url, token, header, forge="Azure DevOps")


def _job_client(settings: Settings) -> tuple[AzureDevOpsClient, TokenProvider]:
    token = JobToken(settings)
    config = AzureDevOpsSettings.of(settings)
    client = AzureDevOpsClient(
        organisation(settings),
        token,
        identities=config.identities,
        user_agent=f"Resolver ({settings.bot_name})",
    )
    return client, token


def conversation(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> Conversation:
    """A work item's comments for a Boards trigger; a pull request's threads otherwise."""
    client, _ = _job_client(settings)
    part = part_of(trigger)
    if isinstance(trigger, TrackerTicket):
        if part.project is None or part.work_item is None:
            raise PermanentCallbackError("the work item's project and id are not recorded")
        return WorkItemComments(client, part.project, part.work_item)
    repo, number = repo_of(trigger), number_of(trigger)
    if repo is None or number is None:
        raise PermanentCallbackError(f"an Azure DevOps conversation is not on a {trigger.kind}")
    return PullThreads(
        client,
        repo,
        number,
        thread_id=part.thread_id,
        comment_id=comment_of(trigger),
        reply_thread=part.reply_thread,
        bot=lambda comment: by_bot(comment, settings),
    )


def ci_report(
    trigger: TaskTrigger, requester_id: int | None, check: FailedCheck, settings: Settings
) -> CIReport:
    """The failed build's error issues as annotations, and the end of its first failed task's
    log."""
    repo = repo_of(trigger)
    if repo is None or check.check_id is None:
        return CIReport()
    project = repo.split("/", 1)[0]
    client, _ = _job_client(settings)
    records = client.failed_records(project, check.check_id)
    # A record of the wrong shape is an unusable answer: the fix starts from the check alone.
    with reading(ERRORS, "GET build/builds/{buildId}/timeline/{timelineId}"):
        annotations = tuple(
            f"{record.get('name') or 'task'}: {issue.get('message') or ''}".strip()
            for record in records
            for issue in record.get("issues") or []
            if issue.get("type") == "error"
        )
        logged = next((r for r in records if (r.get("log") or {}).get("id") is not None), None)
        if logged is None:
            return CIReport(annotations=annotations, unavailable=("the build's log",))
        log_id = int(logged["log"]["id"])
    kept = client.log_tail(project, check.check_id, log_id, LOG_TAIL_CHARS * 4, LOG_READ_BYTES)
    text, cut = tail(kept.decode("utf-8", errors="replace"))
    return CIReport(annotations, text, cut or len(kept) >= LOG_TAIL_CHARS * 4)


def resolve_thread(
    trigger: TaskTrigger,
    requester_id: int | None,
    where: Mapping[str, JsonValue],
    settings: Settings,
) -> None:
    """Resolve the review thread a reply went to (`where`): its status becomes `fixed`."""
    thread = where.get("reply_thread")
    repo, number = repo_of(trigger), number_of(trigger)
    if not isinstance(thread, int) or repo is None or number is None:
        raise PermanentCallbackError("only a pull request's thread can be resolved")
    client, _ = _job_client(settings)
    client.set_thread_status(repo, number, thread, RESOLVED)


def forge(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> Forge:
    client, token = _job_client(settings)
    return AzureRepos(client, token)


def open_pulls(
    trigger: TaskTrigger, requester_id: int | None, full_name: str, base: str, settings: Settings
) -> tuple[PullInfo, ...]:
    client, _ = _job_client(settings)
    return client.open_pulls(full_name, base)


def co_author(user: ForgeUser, settings: Settings) -> tuple[str, str]:
    """The person by their sign-in name, which is their address on Entra ID."""
    login = user.login or user.external_id
    host = urlsplit(AzureDevOpsSettings.of(settings).url or "").hostname or "localhost"
    return login, f"{login.lower()}@users.noreply.{host}"
