"""The Jira stand-in's routes, one handler each, written as Jira's path templates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from integrations.jira.standin.state import API, Answer, Comment, Issue, Request, error_body

if TYPE_CHECKING:
    from integrations.jira.standin.api import JiraAPI

NO_ISSUE = "Issue does not exist or you do not have permission to see it."

Handler = Callable[["JiraAPI", Request], Answer]


def server_info(api: JiraAPI, request: Request) -> Answer:
    cloud = api.deployment == "Cloud"
    version = [1001, 0, 0] if cloud else [9, 12, 4]
    return 200, {
        "baseUrl": api.site,
        "version": ".".join(map(str, version)) + ("-SNAPSHOT" if cloud else ""),
        "versionNumbers": version,
        "deploymentType": api.deployment,
        "buildNumber": 100_245 if cloud else 9_12_004,
        "serverTitle": "Jira",
    }


def myself(api: JiraAPI, request: Request) -> Answer:
    assert request.user is not None
    return 200, api.user_json(request.user)


def get_issue(api: JiraAPI, request: Request) -> Answer:
    issue = api.visible_issue(request)
    if issue is None:
        return 404, error_body(NO_ISSUE)
    wanted = ",".join(request.query.get("fields", ["*all"])).split(",")
    fields = {
        "summary": issue.summary,
        "description": issue.description,
        "comment": _comment_page(api, issue, 0, len(issue.comments) or 1, "created"),
    }
    if "*all" not in wanted and "*navigable" not in wanted:
        fields = {name: value for name, value in fields.items() if name in wanted}
    return 200, {
        "expand": "renderedFields,names,schema,operations,editmeta,changelog",
        "id": str(issue.id),
        "self": f"{api.site}{API}/issue/{issue.id}",
        "key": issue.key,
        "fields": fields,
    }


def _comment_page(
    api: JiraAPI,
    issue: Issue,
    start: int,
    limit: int,
    order: str,
    expand: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    ordered = sorted(issue.comments, key=lambda c: (c.created, c.id))
    if order.startswith("-"):
        ordered.reverse()
    page = ordered[start : start + limit]
    return {
        "startAt": start,
        "maxResults": limit,
        "total": len(ordered),
        "comments": [api.comment_json(issue, c, expand) for c in page],
    }


def _int_query(request: Request, name: str, default: int) -> int | None:
    values = request.query.get(name)
    if not values:
        return default
    return int(values[0]) if values[0].isdigit() else None


def _expand(request: Request) -> frozenset[str]:
    """`expand=renderedBody,properties`: Jira ignores names it does not know."""
    return frozenset(",".join(request.query.get("expand", [])).split(","))


def list_comments(api: JiraAPI, request: Request) -> Answer:
    issue = api.visible_issue(request)
    if issue is None:
        return 404, error_body(NO_ISSUE)
    start = _int_query(request, "startAt", 0)
    limit = _int_query(request, "maxResults", 5000)
    order = request.query.get("orderBy", ["created"])[0]
    if start is None or limit is None or order.lstrip("+-") != "created":
        return 400, error_body("Invalid request parameters")
    return 200, _comment_page(api, issue, start, min(limit, 5000), order, _expand(request))


@dataclass(frozen=True)
class Write:
    """What a comment POST or PUT sends: the body, and comment properties (key to value)."""

    body: str
    properties: dict[str, Any]


def _write(request: Request) -> Write | Answer:
    """The request's comment, or Jira's 400 for an empty body or a malformed property."""
    sent = request.body if isinstance(request.body, dict) else {}
    body = sent.get("body")
    if not isinstance(body, str) or not body.strip():
        return 400, error_body(errors={"comment": "Comment body can not be empty!"})
    properties = _properties(sent.get("properties", []))
    if properties is None:
        return 400, error_body(errors={"properties": "The property key or value is not valid."})
    return Write(body, properties)


def _properties(sent: object) -> dict[str, Any] | None:
    """`[{"key": ..., "value": ...}]` as a dict; None when malformed (keys are 1 to 255 long)."""
    if not isinstance(sent, list):
        return None
    properties: dict[str, Any] = {}
    for item in sent:
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str) or not 0 < len(key) <= 255 or "value" not in item:
            return None
        properties[key] = item["value"]
    return properties


def add_comment(api: JiraAPI, request: Request) -> Answer:
    issue = api.visible_issue(request)
    if issue is None:
        return 404, error_body(NO_ISSUE)
    write = _write(request)
    if not isinstance(write, Write):
        return write
    assert request.user is not None
    comment = api.new_comment(issue, write.body, request.user, write.properties)
    return 201, api.comment_json(issue, comment)


def _find_comment(api: JiraAPI, request: Request) -> tuple[Issue, Comment] | None:
    issue = api.visible_issue(request)
    if issue is None:
        return None
    for comment in issue.comments:
        if str(comment.id) == request.params["id"]:
            return issue, comment
    return None


def _no_comment(api: JiraAPI, request: Request) -> Answer:
    if api.visible_issue(request) is None:
        return 404, error_body(NO_ISSUE)
    return 404, error_body(f"Can not find a comment for the id: {request.params['id']}.")


def get_comment(api: JiraAPI, request: Request) -> Answer:
    found = _find_comment(api, request)
    if found is None:
        return _no_comment(api, request)
    return 200, api.comment_json(*found, _expand(request))


def update_comment(api: JiraAPI, request: Request) -> Answer:
    found = _find_comment(api, request)
    if found is None:
        return _no_comment(api, request)
    issue, comment = found
    if request.user != comment.author:
        return 403, error_body("You do not have the permission to edit this comment.")
    write = _write(request)
    if not isinstance(write, Write):
        return write
    comment.body = write.body
    comment.properties.update(write.properties)
    comment.updated += timedelta(seconds=1)
    return 200, api.comment_json(issue, comment)


def list_webhooks(api: JiraAPI, request: Request) -> Answer:
    """The site's admin webhooks (https://developer.atlassian.com/server/jira/platform/webhooks/)."""
    return 200, [dict(hook) for hook in api.listed_webhooks]


ROUTES: dict[str, Handler] = {
    "GET /rest/webhooks/1.0/webhook": list_webhooks,
    f"GET {API}/serverInfo": server_info,
    f"GET {API}/myself": myself,
    f"GET {API}/issue/{{issueIdOrKey}}": get_issue,
    f"GET {API}/issue/{{issueIdOrKey}}/comment": list_comments,
    f"POST {API}/issue/{{issueIdOrKey}}/comment": add_comment,
    f"GET {API}/issue/{{issueIdOrKey}}/comment/{{id}}": get_comment,
    f"PUT {API}/issue/{{issueIdOrKey}}/comment/{{id}}": update_comment,
}
ANONYMOUS = frozenset({f"GET {API}/serverInfo"})
