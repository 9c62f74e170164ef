"""GitLab's REST API (v4) through python-gitlab: the calls Resolver makes back to GitLab.

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user): `api.translate_errors` reads python-gitlab's and requests' errors and
contract's `HttpErrors` decides. python-gitlab's own retries are off, including its sleep on
429: the callback tasks retry, with one attempt row per try.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

import gitlab
from gitlab.v4.objects import CurrentUserManager, ProjectIssue, ProjectMergeRequest

from integrations.gitlab.api import Connection, translate_errors
from integrations.gitlab.settings import GitLabSettings
from integrations.toolkit.answers import text
from integrations.toolkit.git import basic, repository_header_env
from integrations.toolkit.limits import API_CALL, Limits, tail_limits
from resolver.contract.errors import CallbackError, PermanentCallbackError
from resolver.contract.outbound import PullInfo, RepoInfo
from resolver.core.logs import register_secret
from resolver.core.settings import Settings

TokenProvider = Callable[[], str]
# What a 401 to the token means, as the error to raise instead (None: nothing more to say).
Refused = Callable[[], CallbackError | None]
NoteableKind = Literal["issue", "merge_request"]
ProjectRef = int | str
"""A project's numeric id or its `group/project` path."""

DEVELOPER: Final = 30  # https://docs.gitlab.com/api/members/#roles
PAGE_LIMIT: Final = 100  # GitLab's largest page
MAX_LISTED: Final = 5 * PAGE_LIMIT  # open merge requests read into one base (`conflicts: fix`)
DRAFT_PREFIX: Final = "Draft: "
GIT_USER: Final = "oauth2"  # GitLab takes any token as the password of `oauth2`


@dataclass(frozen=True)
class Note:
    """A comment on an issue or merge request, as GitLab lists it."""

    id: int
    author: str
    body: str
    system: bool = False
    type: str | None = None


@dataclass(frozen=True)
class DiffThread:
    """A discussion on a merge request's diff: the file and line, and its notes in order."""

    id: str
    path: str | None
    line: int | None
    notes: tuple[Note, ...]
    resolved: bool = False
    type: str = "DiffNote"


def _note(data: Mapping[str, Any]) -> Note:
    author = data.get("author") or {}
    return Note(
        id=int(data["id"]),
        author=str(author.get("username") or ""),
        body=str(data.get("body") or ""),
        system=bool(data.get("system")),
        type=data.get("type"),
    )


def _diff_thread(data: Mapping[str, Any]) -> DiffThread | None:
    """A thread that can be resolved: on a diff line (`DiffNote`), or a discussion started as
    such (`DiscussionNote`, with no file or line). Stand-alone notes are not threads."""
    notes = data.get("notes") or []
    kind = notes[0].get("type") if notes else None
    position = notes[0].get("position") if notes else None
    if kind == "DiffNote" and not isinstance(position, dict):
        return None
    if kind not in ("DiffNote", "DiscussionNote") or not notes[0].get("resolvable", True):
        return None
    where = position if isinstance(position, dict) else {}
    line = where.get("new_line") or where.get("old_line")
    return DiffThread(
        id=str(data["id"]),
        path=where.get("new_path") or where.get("old_path"),
        line=int(line) if line is not None else None,
        notes=tuple(_note(n) for n in notes),
        resolved=bool(notes[0].get("resolved")),
        type=str(kind),
    )


def _pull(data: Mapping[str, Any]) -> PullInfo:
    author = data.get("author") or {}
    number = int(data["iid"])
    # A fork's branch is not in the target project; GitLab keeps every merge request's head
    # there as refs/merge-requests/IID/head.
    source, target = data.get("source_project_id"), data.get("target_project_id")
    forked = source is not None and target is not None and source != target
    return PullInfo(
        number=number,
        url=text(data["web_url"]),
        head=text(data["source_branch"]),
        base=data.get("target_branch"),
        author=author.get("username"),
        fetch_ref=f"refs/merge-requests/{number}/head" if forked else None,
    )


class GitLabClient:
    """The REST calls Resolver makes, as the bot or a user.

    `token` is called before every call, so a token replaced in the vault is picked up; it may
    raise a callback error of its own (no credential stored).
    """

    def __init__(
        self, settings: Settings, token: TokenProvider, refused: Refused | None = None
    ) -> None:
        self._settings = settings
        self._token = token
        self._refused = refused

    def __repr__(self) -> str:
        return f"GitLabClient({GitLabSettings.of(self._settings).url!r})"

    @contextmanager
    def _api(self, action: str, limits: Limits = API_CALL) -> Iterator[gitlab.Gitlab]:
        token = self._token()
        register_secret(token, passing=True)
        connection = Connection(self._settings, token, limits)
        try:
            with translate_errors(action, lambda: connection.last_headers):
                yield connection.api
        except PermanentCallbackError as error:
            instead = self._refused() if error.status == 401 and self._refused else None
            if instead is None:
                raise
            raise instead from None
        finally:
            connection.api.session.close()

    def current_username(self) -> str:
        """The user the token acts as: the author of the notes this client posts."""
        with self._api("GET /user") as api:
            return text(CurrentUserManager(api).get().username)

    def project(self, project: ProjectRef) -> RepoInfo:
        """The project's path, clone URL, default branch and web page, as GitLab states them."""
        with self._api("GET /projects/:id") as api:
            found = api.projects.get(project)
            if not found.default_branch:
                raise PermanentCallbackError(f"GitLab project {project} has no default branch yet")
            return RepoInfo(
                full_name=text(found.path_with_namespace),
                clone_url=text(found.http_url_to_repo),
                default_branch=text(found.default_branch),
                web_url=found.web_url,
            )

    def can_write(self, project: ProjectRef, user_id: int) -> bool:
        """Whether the user may push: Developer or higher, directly or through a group."""
        try:
            with self._api("GET /projects/:id/members/all/:user_id") as api:
                member = api.projects.get(project, lazy=True).members_all.get(user_id)
                return int(member.access_level) >= DEVELOPER
        except PermanentCallbackError as error:
            # 404 "Not found" is for a non-member; "Project Not Found" means we cannot see it.
            if error.status == 404 and "Project Not Found" not in str(error):
                return False
            raise

    def post_note(self, project: ProjectRef, kind: NoteableKind, iid: int, body: str) -> int:
        """Comment on an issue or merge request; returns the new note's id."""
        with self._api(f"POST /projects/:id/{_plural(kind)}/:iid/notes") as api:
            note = _noteable(api, project, kind, iid).notes.create({"body": body})
            return int(note.id)

    def edit_note(
        self, project: ProjectRef, kind: NoteableKind, iid: int, note_id: int, body: str
    ) -> None:
        """Replace the body of a note (the status comment)."""
        with self._api(f"PUT /projects/:id/{_plural(kind)}/:iid/notes/:note_id") as api:
            _noteable(api, project, kind, iid).notes.update(note_id, {"body": body})

    def reply_in_discussion(
        self, project: ProjectRef, kind: NoteableKind, iid: int, discussion_id: str, body: str
    ) -> int:
        """Answer in a thread (a diff discussion, say); returns the reply's note id."""
        action = f"POST /projects/:id/{_plural(kind)}/:iid/discussions/:discussion_id/notes"
        with self._api(action) as api:
            thread = _noteable(api, project, kind, iid).discussions.get(discussion_id, lazy=True)
            note = thread.notes.create({"body": body})
            return int(note.id)

    def edit_discussion_note(
        self,
        project: ProjectRef,
        kind: NoteableKind,
        iid: int,
        discussion_id: str,
        note_id: int,
        body: str,
    ) -> None:
        """Replace the body of a note in a thread."""
        plural = _plural(kind)
        action = f"PUT /projects/:id/{plural}/:iid/discussions/:discussion_id/notes/:note_id"
        with self._api(action) as api:
            thread = _noteable(api, project, kind, iid).discussions.get(discussion_id, lazy=True)
            thread.notes.update(note_id, {"body": body})

    def start_diff_discussion(
        self, project: ProjectRef, iid: int, body: str, position: dict[str, Any]
    ) -> str:
        """Open a thread on a line of a merge request's diff; returns the discussion's id."""
        with self._api("POST /projects/:id/merge_requests/:iid/discussions") as api:
            merge_request = _noteable(api, project, "merge_request", iid)
            thread = merge_request.discussions.create({"body": body, "position": position})
            return text(thread.id)

    def resolve_discussion(self, project: ProjectRef, iid: int, discussion_id: str) -> None:
        """Mark a merge request's thread resolved (again: resolving twice is no change)."""
        action = "PUT /projects/:id/merge_requests/:iid/discussions/:discussion_id"
        with self._api(action) as api:
            merge_request = _noteable(api, project, "merge_request", iid)
            merge_request.discussions.update(discussion_id, {"resolved": True})

    def award_eyes(self, project: ProjectRef, kind: NoteableKind, iid: int, note_id: int) -> None:
        """Put 👀 on a note; done already (a retried call) counts as done."""
        action = f"POST /projects/:id/{_plural(kind)}/:iid/notes/:note_id/award_emoji"
        try:
            with self._api(action) as api:
                note = _noteable(api, project, kind, iid).notes.get(note_id, lazy=True)
                note.awardemojis.create({"name": "eyes"})
        except PermanentCallbackError as error:
            # GitLab answers a repeated award with 404 "Award Emoji Name has already been taken".
            if error.status != 404 or "already been taken" not in str(error):
                raise

    def notes(self, project: ProjectRef, kind: NoteableKind, iid: int) -> tuple[Note, ...]:
        """The newest notes of an issue or merge request (at most a page), oldest first."""
        with self._api(f"GET /projects/:id/{_plural(kind)}/:iid/notes") as api:
            found = _noteable(api, project, kind, iid).notes.list(
                sort="desc", order_by="created_at", per_page=PAGE_LIMIT, get_all=False
            )
            return tuple(reversed([_note(n.attributes) for n in found]))

    def diff_threads(self, project: ProjectRef, iid: int) -> tuple[DiffThread, ...]:
        """The discussions on a merge request's diff (the first page of them)."""
        with self._api("GET /projects/:id/merge_requests/:iid/discussions") as api:
            merge_request = _noteable(api, project, "merge_request", iid)
            found = merge_request.discussions.list(per_page=PAGE_LIMIT, get_all=False)
            threads = (_diff_thread(d.attributes) for d in found)
            return tuple(t for t in threads if t is not None)

    def find_open_merge_request(self, project: ProjectRef, source_branch: str) -> PullInfo | None:
        """The open merge request from `source_branch` of the project itself, if any."""
        with self._api("GET /projects/:id/merge_requests") as api:
            found = api.projects.get(project, lazy=True).mergerequests.list(
                state="opened", source_branch=source_branch, per_page=PAGE_LIMIT, get_all=False
            )
            own = [m.attributes for m in found if m.source_project_id == m.target_project_id]
            return _pull(own[0]) if own else None

    def open_merge_requests(self, project: ProjectRef, target_branch: str) -> tuple[PullInfo, ...]:
        """The open merge requests into `target_branch` from the project itself, newest first,
        page after page as GitLab's `Link` headers lead, at most MAX_LISTED.
        https://docs.gitlab.com/api/merge_requests/#list-project-merge-requests"""
        listed: list[dict[str, Any]] = []
        with self._api("GET /projects/:id/merge_requests") as api:
            merge_requests = api.projects.get(project, lazy=True).mergerequests
            for page in range(1, MAX_LISTED // PAGE_LIMIT + 1):  # pages counted, not followed
                found = merge_requests.list(
                    state="opened",
                    target_branch=target_branch,
                    per_page=PAGE_LIMIT,
                    page=page,
                    get_all=False,
                )
                listed += [m.attributes for m in found]
                if len(found) < PAGE_LIMIT:
                    break
            own = (m for m in listed if m.get("source_project_id") == m.get("target_project_id"))
            return tuple(_pull(m) for m in own)

    def get_merge_request(self, project: ProjectRef, iid: int) -> PullInfo:
        with self._api("GET /projects/:id/merge_requests/:iid") as api:
            found = api.projects.get(project, lazy=True).mergerequests.get(iid)
            return _pull(found.attributes)

    def edit_merge_request_description(
        self, project: ProjectRef, iid: int, description: str
    ) -> None:
        with self._api("PUT /projects/:id/merge_requests/:iid") as api:
            merge_request = api.projects.get(project, lazy=True).mergerequests.get(iid, lazy=True)
            merge_request.description = description
            merge_request.save()

    def open_draft_merge_request(
        self, project: ProjectRef, source: str, target: str, title: str, description: str
    ) -> PullInfo:
        """Open a draft merge request from `source` into `target`.

        If GitLab refuses with 409 because one is already open from `source` (a retry after a
        lost answer, or another worker), that one is returned.
        """
        draft = title if title.lower().startswith("draft:") else DRAFT_PREFIX + title
        data = {
            "source_branch": source,
            "target_branch": target,
            "title": draft,
            "description": description,
        }
        try:
            with self._api("POST /projects/:id/merge_requests") as api:
                created = api.projects.get(project, lazy=True).mergerequests.create(data)
                return _pull(created.attributes)
        except PermanentCallbackError as error:
            existing = (
                self.find_open_merge_request(project, source) if error.status == 409 else None
            )
            if existing is None:
                raise
            return existing

    def job_trace_tail(self, project: ProjectRef, job_id: int, keep: int, budget: int) -> bytes:
        """The last `keep` bytes of a job's log, read as a stream of at most `budget` bytes.
        https://docs.gitlab.com/api/jobs/#get-a-log-file"""
        kept, total = b"", 0
        with self._api("GET /projects/:id/jobs/:job_id/trace", tail_limits(budget)) as api:
            job = api.projects.get(project, lazy=True).jobs.get(job_id, lazy=True)
            for chunk in job.trace(streamed=True, iterator=True, chunk_size=64 * 1024):
                total += len(chunk)
                kept = (kept + bytes(chunk))[-keep:]
                if total >= budget:
                    break
        return kept


def _plural(kind: NoteableKind) -> str:
    return "issues" if kind == "issue" else "merge_requests"


def _noteable(
    api: gitlab.Gitlab, project: ProjectRef, kind: NoteableKind, iid: int
) -> ProjectIssue | ProjectMergeRequest:
    """The issue or merge request as a handle (no request is made for it)."""
    found = api.projects.get(project, lazy=True)
    if kind == "issue":
        return found.issues.get(iid, lazy=True)
    return found.mergerequests.get(iid, lazy=True)


def git_auth_env(clone_url: str, token: str) -> dict[str, str]:
    """Environment for host-side git that sends `oauth2:<token>` as Basic auth to `clone_url`'s
    repository only."""
    return repository_header_env(clone_url, token, basic(GIT_USER, token), forge="GitLab")
