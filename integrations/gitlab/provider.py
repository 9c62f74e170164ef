"""GitLab's outbound side: replies where a trigger came from, and the forge a job works on.

Registered as provider `gitlab` when imported. Both act with the bot's token, stored for the
instance (`resolver tokens set --provider gitlab --installation <gitlab_url>`), else with the
requester's own GitLab token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import JsonValue

from integrations.gitlab.client import (
    DiffThread,
    GitLabClient,
    Note,
    NoteableKind,
    ProjectRef,
    TokenProvider,
    git_auth_env,
)
from integrations.gitlab.settings import GitLabSettings
from integrations.gitlab.tokens import JobToken
from integrations.gitlab.trigger import part_of, project_id_of
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import (
    Comment,
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
    comment_of,
    is_pull,
    number_of,
    repo_of,
)
from resolver.core.settings import Settings
from resolver.features.ci.contract import LOG_READ_BYTES, LOG_TAIL_CHARS, tail

KINDS: Final[dict[str, NoteableKind]] = {"issue": "issue", "merge_request": "merge_request"}
# Notes in a thread: on a diff line, or a discussion started as such. Others stand alone.
THREADED_NOTE_TYPES: Final = frozenset({"DiffNote", "DiscussionNote"})


def _client(
    requester_id: int | None, settings: Settings
) -> tuple[GitLabClient, TokenProvider, Settings]:

    token = JobToken(requester_id, settings)
    return GitLabClient(settings, token, refused=token.refused), token, settings


@dataclass(frozen=True)
class GitLabConversation:
    """The issue or merge request a trigger came from, or the thread of its triggering note."""

    client: GitLabClient
    project: ProjectRef
    kind: NoteableKind
    iid: int
    note_id: int | None
    discussion_id: str | None  # set when replies go into the triggering note's thread
    bot: str

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        """The tag is a hidden HTML comment in the text; the reference keeps it for edits."""
        body = with_hidden_tag(text, tag)
        if self.discussion_id is not None:
            note_id = self.client.reply_in_discussion(
                self.project, self.kind, self.iid, self.discussion_id, body
            )
        else:
            note_id = self.client.post_note(self.project, self.kind, self.iid, body)
        return self._ref(note_id, tag)

    def _ref(self, note_id: int, tag: str | None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "iid": self.iid,
            "note_id": note_id,
            "discussion_id": self.discussion_id,
            "tag": tag,
        }

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """Our newest note with `tag`, among the newest page of notes (GitLab cannot list notes
        by date; a post being retried is among the newest). Ours is the bot's, or else that of
        the user the token acts as, asked only when someone else's note carries the tag."""
        notes = reversed(self.client.notes(self.project, self.kind, self.iid))
        tagged = [note for note in notes if has_hidden_tag(note.body, tag)]
        ours = next((note for note in tagged if self._by_bot(note.author)), None)
        if ours is None and tagged:
            # With no bot token stored, notes go out under the requester's name (`token_for_job`).
            poster = self.client.current_username().lower()
            ours = next((note for note in tagged if note.author.lower() == poster), None)
        return None if ours is None else self._ref(ours.id, tag)

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        kind = _kind(ref.get("kind", self.kind))
        iid, note_id = int(ref.get("iid", self.iid)), int(ref["note_id"])
        discussion_id = ref.get("discussion_id")
        body = with_hidden_tag(text, tag_of(ref))
        if discussion_id:
            self.client.edit_discussion_note(
                self.project, kind, iid, str(discussion_id), note_id, body
            )
        else:
            self.client.edit_note(self.project, kind, iid, note_id, body)

    def acknowledge(self) -> None:
        """👀 on the triggering note; a label trigger has none."""
        if self.note_id is not None:
            self.client.award_eyes(self.project, self.kind, self.iid, self.note_id)

    def history(self) -> History:
        """The notes people wrote (not the system's, not ours), and for a merge request its
        diff threads. GitLab notes are Markdown already."""
        notes = self.client.notes(self.project, self.kind, self.iid)
        diff_threads: tuple[DiffThread, ...] = ()
        if self.kind == "merge_request":
            diff_threads = self.client.diff_threads(self.project, self.iid)
        ours = self._ours([*notes, *(n for thread in diff_threads for n in thread.notes)])
        in_threads = {n.id for thread in diff_threads for n in thread.notes}
        comments = tuple(
            Comment(n.author, n.body)
            for n in notes
            if not n.system and n.type != "DiffNote" and n.id not in in_threads and not ours(n)
        )
        threads = (
            ReviewThread(
                path=thread.path,
                line=thread.line,
                comments=tuple(Comment(n.author, n.body) for n in thread.notes if not ours(n)),
                resolved=thread.resolved,
                id=thread.id,
                answered=bool(thread.notes) and ours(thread.notes[-1]),
                where=(("discussion_id", thread.id), ("note_type", thread.type)),
            )
            for thread in diff_threads
        )
        return History(comments=comments, review_threads=tuple(t for t in threads if t.comments))

    def _by_bot(self, author: str) -> bool:
        return author.lower() == self.bot.lower()

    def _ours(self, notes: list[Note]) -> Callable[[Note], bool]:
        """Which notes are the bot's own: its account's, or tagged ones by the user whose token
        the job posts with (asked only when a tagged note not by the bot exists). A tag on
        anyone else's note is a forgery and does not count."""
        tagged = [n for n in notes if has_hidden_tag(n.body) and not self._by_bot(n.author)]
        poster = self.client.current_username().lower() if tagged else ""

        def ours(note: Note) -> bool:
            by_poster = bool(poster) and note.author.lower() == poster
            return self._by_bot(note.author) or (has_hidden_tag(note.body) and by_poster)

        return ours


@dataclass(frozen=True)
class GitLabForge:
    """Projects on the configured GitLab instance, addressed by their `group/project` path."""

    client: GitLabClient
    token: TokenProvider

    def repository(self, full_name: str) -> RepoInfo:
        return self.client.project(full_name)

    def can_write(self, full_name: str, user: ForgeUser) -> bool:
        """Developer or higher; `user.external_id` is the GitLab numeric user id."""
        if not user.external_id.isdigit():
            raise PermanentCallbackError(
                f"GitLab user {user.login or user.external_id!r} is linked without a numeric id"
            )
        return self.client.can_write(full_name, int(user.external_id))

    def git_env(self, clone_url: str) -> dict[str, str]:
        return git_auth_env(clone_url, self.token())

    def find_open_pull(self, full_name: str, head: str) -> PullInfo | None:
        return self.client.find_open_merge_request(full_name, head)

    def get_pull(self, full_name: str, number: int) -> PullInfo:
        return self.client.get_merge_request(full_name, number)

    def open_draft_pull(
        self, full_name: str, head: str, base: str, title: str, body: str
    ) -> PullInfo:
        return self.client.open_draft_merge_request(full_name, head, base, title, body)

    def edit_pull_body(self, full_name: str, number: int, body: str) -> None:
        self.client.edit_merge_request_description(full_name, number, body)


def _kind(value: object) -> NoteableKind:
    kind = KINDS.get(str(value))
    if kind is None:
        raise PermanentCallbackError(f"GitLab cannot reply on a {value!r}")
    return kind


def _project(trigger: TaskTrigger) -> ProjectRef:
    project = project_id_of(trigger) or repo_of(trigger)
    if project is None:
        raise PermanentCallbackError("the GitLab trigger names no project")
    return project


def _iid(trigger: TaskTrigger) -> int:
    iid = number_of(trigger)
    if iid is None:
        raise PermanentCallbackError("the GitLab trigger names no issue or merge request")
    return iid


def _noteable(trigger: TaskTrigger) -> NoteableKind:
    return "merge_request" if is_pull(trigger) else "issue"


def conversation_for(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> GitLabConversation:
    """The conversation of a trigger recorded by `integrations.gitlab.routes`."""
    client, _, settings = _client(requester_id, settings)
    part = part_of(trigger)
    threaded = part.note_type in THREADED_NOTE_TYPES and part.discussion_id
    return GitLabConversation(
        client=client,
        project=_project(trigger),
        kind=_noteable(trigger),
        iid=_iid(trigger),
        note_id=comment_of(trigger),
        discussion_id=part.discussion_id if threaded else None,
        bot=settings.bot_name,
    )


def resolve_thread(
    trigger: TaskTrigger,
    requester_id: int | None,
    where: Mapping[str, JsonValue],
    settings: Settings,
) -> None:
    """Resolve the merge request's discussion a thread reply went to (`where`)."""
    discussion_id = where.get("discussion_id")
    if _noteable(trigger) != "merge_request" or not discussion_id:
        raise PermanentCallbackError("only a merge request's discussion can be resolved")
    client, _, _ = _client(requester_id, settings)
    client.resolve_discussion(_project(trigger), _iid(trigger), str(discussion_id))


def forge_for(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> GitLabForge:
    client, token, _ = _client(requester_id, settings)
    return GitLabForge(client, token)


def co_author(user: ForgeUser, settings: Settings) -> tuple[str, str]:
    """The person as GitLab credits a commit to them: the no-reply address of its host."""
    login = user.login or user.external_id
    host = urlsplit(GitLabSettings.of(settings).url).hostname or "gitlab.com"
    return login, f"{user.external_id}-{login}@users.noreply.{host}"


def ci_report(
    trigger: TaskTrigger, requester_id: int | None, check: FailedCheck, settings: Settings
) -> CIReport:
    """The end of the failed job's log (GitLab has no annotations)."""
    project = _project(trigger)
    if check.check_id is None:
        return CIReport()
    client, _, _ = _client(requester_id, settings)
    kept = client.job_trace_tail(project, check.check_id, LOG_TAIL_CHARS * 4, LOG_READ_BYTES)
    text, cut = tail(kept.decode("utf-8", errors="replace"))
    return CIReport(log_tail=text, log_cut=cut or len(kept) >= LOG_TAIL_CHARS * 4)


def open_pulls(
    trigger: TaskTrigger, requester_id: int | None, full_name: str, base: str, settings: Settings
) -> tuple[PullInfo, ...]:
    """The project's open merge requests into `base` (`conflicts: fix` on a push to it)."""
    client, _, _ = _client(requester_id, settings)
    return client.open_merge_requests(project_id_of(trigger) or full_name, base)
