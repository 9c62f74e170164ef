"""The Linear client against the local Linear: each operation, with user text in variables only."""

from __future__ import annotations

import httpx
import pytest

from integrations.linear.client import LinearClient, LinearComment
from integrations.linear.standin.api import Actor, LinearAPI, LinearIssue, parse_operation
from tests.integrations.linear.conftest import API_KEY, OAUTH_TOKEN


@pytest.fixture
def client(linear: LinearAPI, app: Actor) -> LinearClient:
    return LinearClient(linear.url, OAUTH_TOKEN)


def test_create_comment_sends_the_body_as_a_variable(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, app: Actor
) -> None:
    body = 'Queued "} mutation { issueDelete(id: "x") { success } } #'
    comment_id = client.create_comment(issue.id, body)
    comment = linear.comments[comment_id]
    assert (comment.issue_id, comment.body, comment.author, comment.parent_id) == (
        issue.id,
        body,
        app,
        None,
    )
    [call] = linear.calls("commentCreate")
    assert call.headers["authorization"] == f"Bearer {OAUTH_TOKEN}"
    assert call.operation == "CommentCreate"
    assert call.variables == {"input": {"issueId": issue.id, "body": body}}
    assert body not in call.query and issue.id not in call.query
    assert parse_operation(call.query).variables == {"input": "CommentCreateInput!"}


def test_a_reply_goes_into_the_thread(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, ann: Actor
) -> None:
    parent = linear.add_comment(issue, "@resolver fix it", ann)
    reply_id = client.create_comment(issue.id, "Queued", parent_id=parent.id)
    assert linear.comments[reply_id].parent_id == parent.id


def test_update_comment_replaces_the_body(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue
) -> None:
    comment_id = client.create_comment(issue.id, "Queued")
    client.update_comment(comment_id, "**Done**")
    assert linear.comments[comment_id].body == "**Done**"
    [call] = linear.calls("commentUpdate")
    assert call.variables == {"id": comment_id, "input": {"body": "**Done**"}}


def test_react_puts_eyes_on_a_comment(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, ann: Actor, app: Actor
) -> None:
    comment = linear.add_comment(issue, "@resolver fix it", ann)
    client.react(comment.id)
    assert comment.reactions == [(app.id, "eyes")]


def test_issue_with_comments_reads_the_latest_oldest_first(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, ann: Actor, app: Actor
) -> None:
    first = linear.add_comment(issue, "one", ann)
    linear.add_comment(issue, "two", app, parent_id=first.id)
    linear.add_comment(issue, "three", ann)
    found = client.issue_with_comments(issue.identifier, limit=2)
    assert (found.id, found.identifier, found.title, found.description) == (
        issue.id,
        "ENG-1778",
        "Export fails",
        "Exports time out.",
    )
    assert [c.body for c in found.comments] == ["two", "three"]
    two = found.comments[0]
    assert two == LinearComment(
        id=two.id,
        body="two",
        created_at=two.created_at,
        user_id=app.id,
        user_name="Resolver",
        user_display_name="resolver",
        bot_actor="Resolver",
        parent_id=first.id,
    )
    assert found.comments[1].bot_actor is None
    [call] = linear.calls("issue")
    assert call.variables == {"id": "ENG-1778", "last": 2}


def test_a_personal_api_key_is_sent_bare(
    linear: LinearAPI, issue: LinearIssue, service_user: Actor
) -> None:
    LinearClient(linear.url, API_KEY).create_comment(issue.id, "Queued")
    [call] = linear.calls("commentCreate")
    assert call.headers["authorization"] == API_KEY
    assert call.status == 200


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("query { issue(id: $id) { id } }", 'Variable "$id" is not defined.'),
        ('query { issue(id: "x") { id estimate } }', 'Cannot query field "estimate"'),
        ('query { issue(id: "x", team: "y") { id } }', 'Unknown argument "team"'),
        ("query Q($id: String!) { issue(id: $id) { id } }", 'required type "String!"'),
        ("{ issue(id: ", "Syntax Error"),
    ],
)
def test_the_stand_in_checks_operations_as_linear_does(
    linear: LinearAPI, app: Actor, query: str, message: str
) -> None:
    """What keeps the client's queries honest: a wrong one fails here as it would on Linear."""
    headers = {"Authorization": f"Bearer {OAUTH_TOKEN}"}
    answer = httpx.post(linear.url, json={"query": query}, headers=headers)
    assert answer.status_code == 400
    [error] = answer.json()["errors"]
    assert message in error["message"]
    assert error["extensions"]["code"] in ("GRAPHQL_VALIDATION_FAILED", "GRAPHQL_PARSE_FAILED")
