"""Azure DevOps's REST API 7.1 through httpx: the calls Resolver makes back, on one
organisation (Azure DevOps Services) or one collection (Azure DevOps Server 2022 and later,
which serves the same 7.1 paths).

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user), as contract's `HttpErrors` decides; nothing here retries or sleeps. The token
is asked for before every call and sent only to the organisation.
https://learn.microsoft.com/rest/api/azure/devops/?view=azure-devops-rest-7.1
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar
from urllib.parse import quote

import httpx

from integrations.azuredevops.shapes import (
    allowed_bits,
    comment_items,
    descriptor_of,
    failed_of,
    identifier,
    ids_of,
    plan_of,
    pull_info,
    repository_of,
    values,
)
from integrations.toolkit.answers import fields, reading
from integrations.toolkit.http import JsonCalls, bounded_client
from integrations.toolkit.limits import tail_limits
from resolver.contract.errors import HttpErrors, PermanentCallbackError
from resolver.contract.outbound import PullInfo, RepoInfo

TokenProvider = Callable[[], str]
T = TypeVar("T")

API_VERSION: Final = "7.1"
COMMENTS_VERSION: Final = "7.1-preview.4"  # work item comments are still a preview in 7.1
PAGE_SIZE: Final = 100
# The Git Repositories security namespace and its GenericContribute bit ("Contribute": push).
# https://learn.microsoft.com/azure/devops/organizations/security/namespace-reference
GIT_NAMESPACE: Final = "2e9eb7ed-3c0a-47d4-87c1-0ffdd275fd87"
CONTRIBUTE: Final = 4
THREAD_ACTIVE: Final = 1
THREAD_CLOSED: Final = 4
ERRORS: Final = HttpErrors("Azure DevOps")
# An error answer's words are its `message` (its exception document); 203 is the sign-in page
# Azure DevOps answers a bad personal access token with.
CALLS: Final = JsonCalls(ERRORS, sign_in_page=frozenset({203}))


def authorization(token: str, *, user: str = "") -> str:
    """A personal access token goes as Basic (with any user name: the REST docs use none); an
    Entra token (a JWT, three dot-separated parts) as Bearer."""
    if token.count(".") == 2:
        return f"Bearer {token}"
    return "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()


def split_repo(full_name: str) -> tuple[str, str]:
    """`Project/Repository` → both, quoted for a path (names may hold spaces)."""
    project, sep, name = full_name.partition("/")
    if not sep or not project.strip() or not name.strip() or "/" in name:
        raise PermanentCallbackError(f"{full_name[:100]!r} is not a Project/Repository name")
    return quote(project, safe=""), quote(name, safe="")


class AzureDevOpsClient:
    """The REST calls Resolver makes on one organisation (`url`: `https://dev.azure.com/ORG`
    or a server's collection), identities read from `identities`."""

    def __init__(
        self,
        url: str,
        token: TokenProvider,
        *,
        identities: str | None = None,
        user_agent: str = "Resolver",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._base = url.rstrip("/")
        self._identities = (identities or url).rstrip("/")
        self._token = token
        self._user_agent = user_agent
        self._transport = transport

    def __repr__(self) -> str:
        return f"AzureDevOpsClient({self._base!r})"

    def _call(
        self,
        method: str,
        action: str,
        url: str,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        version: str = API_VERSION,
    ) -> httpx.Response:
        """One request; `action` names it in errors. Every call names its API version."""
        headers = {
            "Authorization": authorization(self._token()),
            "Accept": "application/json",
            "User-Agent": self._user_agent,
        }
        query = {**(params or {}), "api-version": version}
        return CALLS.send(
            method, action, url, headers=headers, json=json, params=query, transport=self._transport
        )

    def _json(
        self, method: str, action: str, url: str, shape: Callable[[Any], T], **options: Any
    ) -> T:
        """One request and its answer as `shape` reads it (a wrong shape is an unusable one)."""
        return CALLS.read(action, self._call(method, action, url, **options), shape)

    def _git(self, full_name: str, rest: str = "") -> str:
        project, name = split_repo(full_name)
        return f"{self._base}/{project}/_apis/git/repositories/{name}{rest}"

    # --- repositories and permissions
    def repository(self, full_name: str) -> RepoInfo:
        action = "GET git/repositories/{repositoryId}"
        return self._json("GET", action, self._git(full_name), repository_of)

    def repository_ids(self, full_name: str) -> tuple[str, str]:
        """The repository's project id and its own id."""
        action = "GET git/repositories/{repositoryId}"
        return self._json("GET", action, self._git(full_name), ids_of)

    def descriptor(self, identity_id: str) -> str | None:
        """The identity's security descriptor, by its id."""
        url = f"{self._identities}/_apis/identities"
        params = {"identityIds": identity_id}
        return self._json("GET", "GET identities", url, descriptor_of, params=params)

    def can_contribute(self, full_name: str, identity_id: str) -> bool:
        """Whether the identity may push to the repository: its effective allow of Contribute
        in the Git Repositories namespace, on the repository's token (`repoV2/<project>/<repo>`),
        inherited permissions included. The bot needs Security: manage to read it."""
        descriptor = self.descriptor(identity_id)
        if descriptor is None:
            return False
        found = self.access_lists(full_name, descriptor)
        with reading(ERRORS, "GET accesscontrollists"):
            return any(allowed_bits(acl, descriptor) & CONTRIBUTE for acl in found)

    def access_lists(self, full_name: str, descriptor: str = "") -> list[dict[str, Any]]:
        """The repository's ACLs in the Git Repositories namespace, with `descriptor`'s
        effective permissions (none asked: whether the bot may read them at all)."""
        project_id, repository_id = self.repository_ids(full_name)
        params = {
            "token": f"repoV2/{project_id}/{repository_id}",
            "includeExtendedInfo": "true",
        }
        if descriptor:
            params["descriptors"] = descriptor
        url = f"{self._base}/_apis/accesscontrollists/{GIT_NAMESPACE}"
        return self._json("GET", "GET accesscontrollists", url, values, params=params)

    # --- pull request threads
    def _threads(self, full_name: str, number: int) -> str:
        return self._git(full_name, f"/pullRequests/{number}/threads")

    def post_thread(
        self,
        full_name: str,
        number: int,
        text: str,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> tuple[int, int]:
        """A new active thread on the pull request with one comment (on a line of its diff,
        with a `threadContext`); (thread id, comment id)."""
        data = self.create_thread(full_name, number, text, context=context)
        with reading(ERRORS, "POST pullRequests/{pullRequestId}/threads"):
            return int(data["id"]), int(fields(data["comments"][0])["id"])

    def create_thread(
        self,
        full_name: str,
        number: int,
        text: str,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """`post_thread`, answering with the whole thread (its comment's author too)."""
        body: dict[str, Any] = {
            "comments": [{"parentCommentId": 0, "content": text, "commentType": "text"}],
            "status": "active",
        }
        if context is not None:
            body["threadContext"] = dict(context)
        action = "POST pullRequests/{pullRequestId}/threads"
        return self._json("POST", action, self._threads(full_name, number), fields, json=body)

    def reply(self, full_name: str, number: int, thread_id: int, text: str) -> int:
        """A reply in a thread; the new comment's id."""
        body = {"parentCommentId": 1, "content": text, "commentType": "text"}
        action = "POST pullRequests/{pullRequestId}/threads/{threadId}/comments"
        url = f"{self._threads(full_name, number)}/{thread_id}/comments"
        return self._json("POST", action, url, identifier, json=body)

    def edit_comment(
        self, full_name: str, number: int, thread_id: int, comment_id: int, text: str
    ) -> None:
        action = "PATCH pullRequests/{pullRequestId}/threads/{threadId}/comments/{commentId}"
        url = f"{self._threads(full_name, number)}/{thread_id}/comments/{comment_id}"
        self._call("PATCH", action, url, json={"content": text})

    def like(self, full_name: str, number: int, thread_id: int, comment_id: int) -> None:
        """Like a comment: the acknowledgement (Azure Repos has no other reaction)."""
        action = "POST pullRequests/{pullRequestId}/threads/{threadId}/comments/{commentId}/likes"
        url = f"{self._threads(full_name, number)}/{thread_id}/comments/{comment_id}/likes"
        self._call("POST", action, url)

    def set_thread_status(self, full_name: str, number: int, thread_id: int, status: str) -> None:
        """A thread's status (`fixed`: resolved; `active`: open again)."""
        action = "PATCH pullRequests/{pullRequestId}/threads/{threadId}"
        url = f"{self._threads(full_name, number)}/{thread_id}"
        self._call("PATCH", action, url, json={"status": status})

    def threads(self, full_name: str, number: int) -> list[dict[str, Any]]:
        action = "GET pullRequests/{pullRequestId}/threads"
        return self._json("GET", action, self._threads(full_name, number), values)

    def reviewers(self, full_name: str, number: int) -> list[dict[str, Any]]:
        """The pull request's reviewers, each with its vote."""
        action = "GET pullRequests/{pullRequestId}/reviewers"
        url = self._git(full_name, f"/pullRequests/{number}/reviewers")
        return self._json("GET", action, url, values)

    def vote(self, full_name: str, number: int, reviewer_id: str, vote: int) -> None:
        """The token's identity's vote as a reviewer (`reviewer_id`: its own identity id)."""
        action = "PUT pullRequests/{pullRequestId}/reviewers/{reviewerId}"
        rest = f"/pullRequests/{number}/reviewers/{quote(reviewer_id, safe='')}"
        self._call("PUT", action, self._git(full_name, rest), json={"vote": vote})

    # --- pull requests
    def _pulls(self, full_name: str, criteria: Mapping[str, str]) -> list[dict[str, Any]]:
        params = {f"searchCriteria.{k}": v for k, v in criteria.items()} | {"$top": PAGE_SIZE}
        action = "GET git/repositories/{repositoryId}/pullrequests"
        return self._json(
            "GET", action, self._git(full_name, "/pullrequests"), values, params=params
        )

    def _web(self, full_name: str) -> str:
        project, name = split_repo(full_name)
        return f"{self._base}/{project}/_git/{name}"

    def find_open_pull(self, full_name: str, head: str) -> PullInfo | None:
        """The open pull request from branch `head` of the repository itself (a fork's branch
        of the same name is another's)."""
        found = self._pulls(full_name, {"sourceRefName": f"refs/heads/{head}", "status": "active"})
        own = [item for item in found if not item.get("forkSource")]
        return pull_info(own[0], self._web(full_name)) if own else None

    def open_pulls(self, full_name: str, base: str) -> tuple[PullInfo, ...]:
        found = self._pulls(full_name, {"targetRefName": f"refs/heads/{base}", "status": "active"})
        return tuple(pull_info(item, self._web(full_name)) for item in found)

    def get_pull(self, full_name: str, number: int) -> PullInfo:
        action = "GET git/repositories/{repositoryId}/pullrequests/{pullRequestId}"
        web = self._web(full_name)
        url = self._git(full_name, f"/pullrequests/{number}")
        return self._json("GET", action, url, lambda answer: pull_info(answer, web))

    def edit_pull_body(self, full_name: str, number: int, body: str) -> None:
        action = "PATCH git/repositories/{repositoryId}/pullrequests/{pullRequestId}"
        url = self._git(full_name, f"/pullrequests/{number}")
        self._call("PATCH", action, url, json={"description": body})

    def open_draft_pull(
        self, full_name: str, head: str, base: str, title: str, body: str
    ) -> PullInfo:
        """A draft pull request (`isDraft`) from `head` into `base`. If one is open already
        (409: another worker raced us), that one is returned."""
        form = {
            "sourceRefName": f"refs/heads/{head}",
            "targetRefName": f"refs/heads/{base}",
            "title": title,
            "description": body,
            "isDraft": True,
        }
        action = "POST git/repositories/{repositoryId}/pullrequests"
        web, url = self._web(full_name), self._git(full_name, "/pullrequests")
        try:
            return self._json("POST", action, url, lambda answer: pull_info(answer, web), json=form)
        except PermanentCallbackError as error:
            existing = self.find_open_pull(full_name, head) if error.status == 409 else None
            if existing is None:
                raise
            return existing

    # --- builds (Azure Pipelines)
    def _build(self, project: str, build_id: int) -> str:
        return f"{self._base}/{quote(project, safe='')}/_apis/build/builds/{build_id}"

    def failed_records(self, project: str, build_id: int) -> list[dict[str, Any]]:
        """The failed records of a build's timeline (its plan's), in order."""
        url = self._build(project, build_id)
        plan = self._json("GET", "GET build/builds/{buildId}", url, plan_of)
        if not plan:
            return []
        action = "GET build/builds/{buildId}/timeline/{timelineId}"
        url = f"{self._build(project, build_id)}/timeline/{quote(plan, safe='')}"
        return self._json("GET", action, url, failed_of)

    def log_tail(self, project: str, build_id: int, log_id: int, keep: int, budget: int) -> bytes:
        """The last `keep` bytes of a build log, read as a stream of at most `budget` bytes."""
        url = f"{self._build(project, build_id)}/logs/{log_id}"
        headers = {
            "Authorization": authorization(self._token()),
            "Accept": "text/plain",
            "User-Agent": self._user_agent,
        }
        kept, total = b"", 0
        action = "GET build/builds/{buildId}/logs/{logId}"
        try:
            with (
                bounded_client(tail_limits(budget), self._transport) as http,
                http.stream(
                    "GET", url, headers=headers, params={"api-version": API_VERSION}
                ) as response,
            ):
                if response.status_code >= 400:
                    raise ERRORS.answered(action, response.status_code, "no log")
                for chunk in response.iter_bytes(64 * 1024):
                    total += len(chunk)
                    kept = (kept + chunk)[-keep:]
                    if total >= budget:
                        break
        except httpx.TransportError as error:
            raise ERRORS.unreachable(action, error) from None
        except httpx.DecodingError as error:
            raise ERRORS.unusable_answer(action, error) from None
        return kept

    # --- work items (Azure Boards)
    def _comments(self, project: str, work_item: int) -> str:
        return f"{self._base}/{quote(project, safe='')}/_apis/wit/workItems/{work_item}/comments"

    def post_work_item_comment(self, project: str, work_item: int, text: str) -> int:
        action = "POST wit/workItems/{workItemId}/comments"
        url = self._comments(project, work_item)
        form = {"text": text}
        return self._json("POST", action, url, identifier, json=form, version=COMMENTS_VERSION)

    def edit_work_item_comment(
        self, project: str, work_item: int, comment_id: int, text: str
    ) -> None:
        action = "PATCH wit/workItems/{workItemId}/comments/{commentId}"
        url = f"{self._comments(project, work_item)}/{comment_id}"
        self._call("PATCH", action, url, json={"text": text}, version=COMMENTS_VERSION)

    def work_item_comments(self, project: str, work_item: int) -> list[dict[str, Any]]:
        action = "GET wit/workItems/{workItemId}/comments"
        url = self._comments(project, work_item)
        return self._json("GET", action, url, comment_items, version=COMMENTS_VERSION)
