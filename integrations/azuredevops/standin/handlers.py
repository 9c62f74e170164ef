"""The Azure DevOps stand-in's REST handlers: each takes the API, the routed call and the
caller's identity id, and answers as Azure DevOps does (status, body, headers). Route keys are
the operations of Microsoft's descriptions, `"METHOD /{organization}/…"`."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote

from integrations.azuredevops.standin.builds import BUILD_ROUTES
from integrations.azuredevops.standin.state import (
    CONTRIBUTE,
    GIT_NAMESPACE,
    READ,
    Comment,
    NotFoundError,
    Subscription,
    Thread,
    WorkItemComment,
    comment_json,
    now,
    repo_json,
)
from integrations.standin.server import Reply, Routed

if TYPE_CHECKING:
    from integrations.azuredevops.standin.api import AzureDevOpsAPI

Handler = Callable[["AzureDevOpsAPI", Routed, str], Reply]
GIT: Final = "/{organization}/{project}/_apis/git/repositories/{repositoryId}"
THREADS: Final = GIT + "/pullRequests/{pullRequestId}/threads"
COMMENTS: Final = "/{organization}/{project}/_apis/wit/workItems/{workItemId}/comments"
THREAD_STATUSES: Final = frozenset({"active", "fixed", "wontFix", "closed", "byDesign", "pending"})


def listed(items: list[Any]) -> Reply:
    return 200, {"count": len(items), "value": items}, {}


def _body(call: Routed) -> dict[str, Any]:
    return call.body if isinstance(call.body, dict) else {}


def _query(call: Routed, name: str) -> str | None:
    values = call.query.get(name)
    return values[-1] if values else None


def get_repository(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    return 200, repo_json(api.repo_of(call.params), api.url), {}


def read_identities(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    ids = (_query(call, "identityIds") or "").split(",")
    found = [api.people[i] for i in ids if i in api.people]
    return listed(
        [
            {
                "id": p.id,
                "descriptor": p.descriptor,
                "providerDisplayName": p.display_name,
                "isActive": True,
                "isContainer": False,
            }
            for p in found
        ]
    )


def query_acls(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """The repository token's ACL with the asked descriptors' effective allow. Reading it
    takes Manage permissions on the namespace: the stand-in lets a caller who may contribute."""
    if call.params["securityNamespaceId"] != GIT_NAMESPACE:
        return listed([])
    token = _query(call, "token") or ""
    repo = next((r for r in api.repos.values() if token == f"repoV2/{r.project_id}/{r.id}"), None)
    if repo is None:
        return listed([])
    if me not in repo.contributors:
        return 403, {"message": "TF50309: no permission to read security"}, {}
    wanted = (_query(call, "descriptors") or "").split(",")
    aces = {}
    for person in api.people.values():
        if person.descriptor in wanted:
            allow = (CONTRIBUTE | READ) if person.id in repo.contributors else 0
            allow |= READ if person.id in repo.readers else 0
            info = {"effectiveAllow": allow, "effectiveDeny": 0, "inheritedAllow": allow}
            aces[person.descriptor] = {
                "descriptor": person.descriptor,
                "allow": 0,
                "deny": 0,
                "extendedInfo": info,
            }
    acl = {"inheritPermissions": True, "token": token, "acesDictionary": aces}
    return listed([acl])


def get_profile(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """`me`, or the caller's own id: a profile is only its owner's to read."""
    if call.params["id"] not in ("me", me):
        return 404, api.NOT_FOUND, {}
    person = api.people[me]
    attributes = {
        "DisplayName": {"value": person.display_name},
        "EmailAddress": {"value": person.unique_name},
    }
    return 200, {"id": me, "coreAttributes": attributes, "revision": 1, "timeStamp": now()}, {}


def has_permissions(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """The caller's own permission bits on each token: one boolean each."""
    bits = int(call.params["permissions"])
    answers = []
    for token in (_query(call, "tokens") or "").split(","):
        repo = next(
            (r for r in api.repos.values() if token == f"repoV2/{r.project_id}/{r.id}"), None
        )
        allow = 0
        if repo is not None and me in repo.contributors:
            allow = CONTRIBUTE | READ
        elif repo is not None and me in repo.readers:
            allow = READ
        answers.append(call.params["securityNamespaceId"] == GIT_NAMESPACE and allow & bits == bits)
    return listed(answers)


def create_thread(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """400 for a context that names no file (a path from the repository's root, `/…`) or not
    exactly one side's start and end lines."""
    pull = api.pull_of(call.params)
    body = _body(call)
    first = (body.get("comments") or [{}])[0]
    context = body.get("threadContext")
    if context is not None and not _valid_context(context):
        return 400, {"message": "The thread context must name a file and one side's lines."}, {}
    comment = Comment(next(api.ids), 0, me, str(first.get("content") or ""))
    thread = Thread(next(api.ids), [comment], str(body.get("status") or "active"))
    thread.context = dict(context) if isinstance(context, dict) else None
    pull.threads.append(thread)
    return 200, _thread_json(api, thread), {}


def _valid_context(context: object) -> bool:
    if not isinstance(context, dict) or not str(context.get("filePath") or "").startswith("/"):
        return False
    sides = [s for s in ("right", "left") if f"{s}FileStart" in context or f"{s}FileEnd" in context]
    if len(sides) != 1:
        return False
    start, end = context.get(f"{sides[0]}FileStart"), context.get(f"{sides[0]}FileEnd")
    lines = [p.get("line") if isinstance(p, dict) else None for p in (start, end)]
    first, last = lines
    return isinstance(first, int) and isinstance(last, int) and 1 <= first <= last


def list_threads(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    pull = api.pull_of(call.params)
    return listed([_thread_json(api, t) for t in pull.threads])


def _thread_json(api: AzureDevOpsAPI, thread: Thread) -> dict[str, Any]:
    return {
        "id": thread.id,
        "publishedDate": thread.published,
        "lastUpdatedDate": thread.published,
        "comments": [comment_json(c, api.ref(c.author), api.url) for c in thread.comments],
        "status": thread.status,
        "isDeleted": False,
        "properties": {},
    } | ({"threadContext": thread.context} if thread.context is not None else {})


def _thread_of(api: AzureDevOpsAPI, call: Routed) -> Thread:
    pull = api.pull_of(call.params)
    found = next((t for t in pull.threads if t.id == int(call.params["threadId"])), None)
    if found is None:
        raise NotFoundError(call.params["threadId"])
    return found


def _comment_of(api: AzureDevOpsAPI, call: Routed) -> Comment:
    thread = _thread_of(api, call)
    found = next((c for c in thread.comments if c.id == int(call.params["commentId"])), None)
    if found is None:
        raise NotFoundError(call.params["commentId"])
    return found


def update_thread(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """A thread's status (`fixed`, `active`, …): what the stand-in keeps, with who set it."""
    thread = _thread_of(api, call)
    status = _body(call).get("status")
    if status not in THREAD_STATUSES:
        return 400, {"message": "The thread status is not valid."}, {}
    thread.status = str(status)
    api.statuses.append((thread.id, thread.status, me))
    return 200, _thread_json(api, thread), {}


def reply_in_thread(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    thread = _thread_of(api, call)
    body = _body(call)
    comment = Comment(next(api.ids), int(body.get("parentCommentId") or 0), me, body["content"])
    thread.comments.append(comment)
    return 200, comment_json(comment, api.ref(me), api.url), {}


def update_comment(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """Only its author may edit a comment (Azure DevOps answers 403 to anyone else)."""
    comment = _comment_of(api, call)
    if comment.author != me:
        return 403, {"message": "You can only edit your own comments."}, {}
    comment.content, comment.updated = str(_body(call).get("content") or ""), now()
    return 200, comment_json(comment, api.ref(me), api.url), {}


def like_comment(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    _comment_of(api, call).likes.add(me)
    return 200, None, {}


def _pull_json(api: AzureDevOpsAPI, pull: Any) -> dict[str, Any]:
    found = _pull_fields(api, pull)
    if pull.fork is not None:
        # `GitForkRef`: the source ref, in the fork.
        found["forkSource"] = {"name": pull.source, "repository": repo_json(pull.fork, api.url)}
    if pull.merge is not None:
        names = ("lastMergeCommit", "lastMergeSourceCommit", "lastMergeTargetCommit")
        base = f"{api.url}/{pull.repo.project_id}/_apis/git/repositories/{pull.repo.id}/commits"
        for name, commit in zip(names, pull.merge, strict=True):
            found[name] = {"commitId": commit, "url": f"{base}/{commit}"}
    return found


def _pull_fields(api: AzureDevOpsAPI, pull: Any) -> dict[str, Any]:
    return {
        "pullRequestId": pull.id,
        "codeReviewId": pull.id,
        "repository": repo_json(pull.repo, api.url),
        "status": pull.status,
        "createdBy": api.ref(pull.created_by),
        "creationDate": pull.created,
        "title": pull.title,
        "description": pull.description,
        "sourceRefName": pull.source,
        "targetRefName": pull.target,
        "isDraft": pull.is_draft,
        "mergeStatus": "succeeded",
        "url": f"{api.url}/{pull.repo.project_id}/_apis/git/repositories/{pull.repo.id}"
        f"/pullRequests/{pull.id}",
        "supportsIterations": True,
    }


def list_pulls(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    repo = api.repo_of(call.params)
    source = _query(call, "searchCriteria.sourceRefName")
    target = _query(call, "searchCriteria.targetRefName")
    status = _query(call, "searchCriteria.status") or "active"
    found = [
        p
        for p in reversed(api.pulls)
        if p.repo == repo
        and p.status == status
        and source in (None, p.source)
        and target in (None, p.target)
    ]
    return listed([_pull_json(api, p) for p in found])


def create_pull(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """409 when an active pull request from the same branch into the same one exists."""
    repo, body = api.repo_of(call.params), _body(call)
    source, target = str(body.get("sourceRefName")), str(body.get("targetRefName"))
    if any(p.repo == repo and (p.source, p.target, p.status) == (source, target, "active")
           for p in api.pulls):  # fmt: skip
        message = (
            "TF401179: An active pull request for the source and target branch already exists."
        )
        return 409, {"message": message, "typeKey": "GitPullRequestExistsException"}, {}
    pull = api.add_pull(
        repo,
        source.removeprefix("refs/heads/"),
        api.people[me],
        target=target.removeprefix("refs/heads/"),
        title=str(body.get("title") or ""),
        description=str(body.get("description") or ""),
        is_draft=bool(body.get("isDraft")),
    )
    return 201, _pull_json(api, pull), {}


def list_reviewers(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    pull = api.pull_of(call.params)
    return listed([_reviewer_json(api, who, vote) for who, vote in pull.reviewers.items()])


def vote(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """A reviewer's vote (10 approved … -5 waiting for the author, -10 rejected): only one's
    own (400 otherwise); voting makes the caller a reviewer."""
    pull = api.pull_of(call.params)
    reviewer = unquote(call.params["reviewerId"])
    value = _body(call).get("vote")
    if reviewer != me:
        return 400, {"message": "A vote can only be cast by the reviewer themself."}, {}
    if value not in (10, 5, 0, -5, -10):
        return 400, {"message": "The vote must be one of 10, 5, 0, -5 or -10."}, {}
    pull.reviewers[me] = int(value)
    return 200, _reviewer_json(api, me, int(value)), {}


def _reviewer_json(api: AzureDevOpsAPI, who: str, value: int) -> dict[str, Any]:
    return api.ref(who) | {"vote": value, "hasDeclined": False, "isFlagged": False}


def get_pull(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    return 200, _pull_json(api, api.pull_of(call.params)), {}


def update_pull(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    pull, body = api.pull_of(call.params), _body(call)
    pull.description = str(body.get("description", pull.description))
    pull.title = str(body.get("title", pull.title))
    return 200, _pull_json(api, pull), {}


def _wi_comment_json(api: AzureDevOpsAPI, comment: WorkItemComment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "workItemId": comment.work_item,
        "version": 1,
        "text": comment.text,
        "createdBy": api.ref(comment.author),
        "createdDate": comment.created,
        "modifiedBy": api.ref(comment.author),
        "modifiedDate": comment.modified,
        "isDeleted": False,
        "url": f"{api.url}/_apis/wit/workItems/{comment.work_item}/comments/{comment.id}",
    }


def _work_item(api: AzureDevOpsAPI, call: Routed) -> list[WorkItemComment]:
    key = (unquote(call.params["project"]), int(call.params["workItemId"]))
    if key not in api.work_items:
        raise NotFoundError(str(key))
    return api.work_items[key]


def add_wi_comment(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    comments = _work_item(api, call)
    project, item = unquote(call.params["project"]), int(call.params["workItemId"])
    comment = WorkItemComment(next(api.ids), item, project, str(_body(call).get("text")), me)
    comments.append(comment)
    return 200, _wi_comment_json(api, comment), {}


def list_wi_comments(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    comments = [_wi_comment_json(api, c) for c in _work_item(api, call)]
    return 200, {"totalCount": len(comments), "count": len(comments), "comments": comments}, {}


def update_wi_comment(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    wanted = int(call.params["commentId"])
    comment = next((c for c in _work_item(api, call) if c.id == wanted), None)
    if comment is None:
        raise NotFoundError(str(wanted))
    if comment.author != me:
        return 403, {"message": "You can only edit your own comments."}, {}
    comment.text, comment.modified = str(_body(call).get("text") or ""), now()
    return 200, _wi_comment_json(api, comment), {}


def _subscription_json(api: AzureDevOpsAPI, found: Subscription) -> dict[str, Any]:
    """The password and the headers are never sent back (Azure DevOps masks them)."""
    inputs = {k: v for k, v in found.consumer_inputs.items() if k not in ("basicAuthPassword",
              "httpHeaders")}  # fmt: skip
    return {
        "id": found.id,
        "publisherId": "tfs",
        "eventType": found.event_type,
        "consumerId": "webHooks",
        "consumerActionId": "httpRequest",
        "publisherInputs": found.publisher_inputs,
        "consumerInputs": inputs,
        "status": "enabled",
        "createdDate": found.created,
        "url": f"{api.url}/_apis/hooks/subscriptions/{found.id}",
    }


def create_subscription(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    body = _body(call)
    found = Subscription(
        str(uuid.uuid4()),
        str(body.get("eventType")),
        dict(body.get("consumerInputs") or {}),
        dict(body.get("publisherInputs") or {}),
    )
    api.subscriptions[found.id] = found
    return 200, _subscription_json(api, found), {}


def list_subscriptions(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    return listed([_subscription_json(api, s) for s in api.subscriptions.values()])


def replace_subscription(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    found = api.subscriptions.get(call.params["subscriptionId"])
    if found is None:
        raise NotFoundError(call.params["subscriptionId"])
    body = _body(call)
    found.consumer_inputs = dict(body.get("consumerInputs") or {})
    found.publisher_inputs = dict(body.get("publisherInputs") or {})
    return 200, _subscription_json(api, found), {}


ROUTES: Final[dict[str, Handler]] = {
    f"GET {GIT}": get_repository,
    "GET /{organization}/_apis/identities": read_identities,
    "GET /{organization}/_apis/accesscontrollists/{securityNamespaceId}": query_acls,
    "GET /_apis/profile/profiles/{id}": get_profile,
    "GET /{organization}/_apis/permissions/{securityNamespaceId}/{permissions}": has_permissions,
    f"POST {THREADS}": create_thread,
    f"GET {THREADS}": list_threads,
    f"PATCH {THREADS}/{{threadId}}": update_thread,
    f"POST {THREADS}/{{threadId}}/comments": reply_in_thread,
    f"PATCH {THREADS}/{{threadId}}/comments/{{commentId}}": update_comment,
    f"POST {THREADS}/{{threadId}}/comments/{{commentId}}/likes": like_comment,
    f"GET {GIT}/pullRequests/{{pullRequestId}}/reviewers": list_reviewers,
    f"PUT {GIT}/pullRequests/{{pullRequestId}}/reviewers/{{reviewerId}}": vote,
    f"GET {GIT}/pullrequests": list_pulls,
    f"POST {GIT}/pullrequests": create_pull,
    f"GET {GIT}/pullrequests/{{pullRequestId}}": get_pull,
    f"PATCH {GIT}/pullrequests/{{pullRequestId}}": update_pull,
    f"POST {COMMENTS}": add_wi_comment,
    f"GET {COMMENTS}": list_wi_comments,
    f"PATCH {COMMENTS}/{{commentId}}": update_wi_comment,
    "POST /{organization}/_apis/hooks/subscriptions": create_subscription,
    "GET /{organization}/_apis/hooks/subscriptions": list_subscriptions,
    "PUT /{organization}/_apis/hooks/subscriptions/{subscriptionId}": replace_subscription,
    **BUILD_ROUTES,
}
