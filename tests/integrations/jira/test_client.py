"""The Jira client against the local Jira: each call, on Cloud (Basic) and Data Center (Bearer)."""

from __future__ import annotations

import base64

import pytest

from integrations.jira.client import JiraClient, JiraComment, JiraIssue, jira_session
from integrations.jira.standin.api import JiraAPI, User
from tests.integrations.jira.conftest import API_TOKEN, EMAIL, ISSUE, PAT

COMMENTS = "POST /rest/api/2/issue/{issueIdOrKey}/comment"


@pytest.fixture
def client(jira: JiraAPI, bot: User) -> JiraClient:
    return JiraClient(jira.site, f"{EMAIL}:{API_TOKEN}")


def test_add_comment_posts_the_body_with_basic_auth(client: JiraClient, jira: JiraAPI) -> None:
    comment_id = client.add_comment(ISSUE, "*Queued*")
    [call] = jira.calls(COMMENTS)
    assert call.status == 201
    assert call.path == f"/rest/api/2/issue/{ISSUE}/comment"
    assert call.body == {"body": "*Queued*"}
    basic = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    assert call.headers["authorization"] == f"Basic {basic}"
    issue = jira.issue_by_key(ISSUE)
    assert issue is not None
    assert [(str(c.id), c.body) for c in issue.comments] == [(comment_id, "*Queued*")]


def test_no_request_is_sent_before_the_first_call(jira: JiraAPI, bot: User) -> None:
    JiraClient(jira.site, f"{EMAIL}:{API_TOKEN}")
    assert jira.requests == []


def test_edit_comment_replaces_the_body(client: JiraClient, jira: JiraAPI) -> None:
    comment_id = client.add_comment(ISSUE, "Queued")
    client.edit_comment(ISSUE, comment_id, "*Done*")
    issue = jira.issue_by_key(ISSUE)
    assert issue is not None
    assert [c.body for c in issue.comments] == ["*Done*"]
    put = jira.calls("PUT /rest/api/2/issue/{issueIdOrKey}/comment/{id}")
    assert [(c.status, c.body) for c in put] == [(200, {"body": "*Done*"})]


def test_comment_properties_are_set_with_the_comment_and_kept_by_an_edit(
    client: JiraClient, jira: JiraAPI
) -> None:
    comment_id = client.add_comment(ISSUE, "Queued", {"resolver.message": {"tag": "status-12"}})
    [call] = jira.calls(COMMENTS)
    assert call.body == {
        "body": "Queued",
        "properties": [{"key": "resolver.message", "value": {"tag": "status-12"}}],
    }
    client.edit_comment(ISSUE, comment_id, "Done")
    [plain] = client.comments(ISSUE, limit=5)
    [expanded] = client.comments(ISSUE, limit=5, properties=True)
    assert (plain.body, plain.properties) == ("Done", {})
    assert (expanded.body, expanded.properties) == (
        "Done",
        {"resolver.message": {"tag": "status-12"}},
    )
    listed = jira.calls("GET /rest/api/2/issue/{issueIdOrKey}/comment")
    assert [c.query.get("expand") for c in listed] == [None, ["properties"]]


def test_comments_are_the_newest_ones_oldest_first(
    client: JiraClient, jira: JiraAPI, bot: User
) -> None:
    ann = jira.add_user("Ann Example")
    added = [
        jira.add_comment(ISSUE, f"comment {number}", ann if number % 2 else bot)
        for number in range(5)
    ]
    found = client.comments(ISSUE, limit=3)
    assert [c.body for c in found] == ["comment 2", "comment 3", "comment 4"]
    assert found[1] == JiraComment(
        id=str(added[3].id),
        body="comment 3",
        author_display_name="Ann Example",
        author_name=None,
        author_account_id=ann.account_id,
        created=added[3].created,
        properties={},
    )
    [call] = jira.calls("GET /rest/api/2/issue/{issueIdOrKey}/comment")
    assert call.query == {"maxResults": ["3"], "orderBy": ["-created"]}


def test_issue_reads_summary_and_description(client: JiraClient) -> None:
    assert client.issue(ISSUE) == JiraIssue(ISSUE, "Export fails", "Exports time out.")


def test_data_center_under_a_context_path_with_a_personal_access_token(
    jira_dc: JiraAPI,
) -> None:
    client = JiraClient(jira_dc.site + "/", PAT)
    comment_id = client.add_comment(ISSUE, "Queued")
    client.edit_comment(ISSUE, comment_id, "Done")
    [comment] = client.comments(ISSUE, limit=10)
    assert (comment.body, comment.author_name, comment.author_account_id) == (
        "Done",
        "resolver",
        None,
    )
    assert {r.headers["authorization"] for r in jira_dc.requests} == {f"Bearer {PAT}"}
    assert all(r.status in (200, 201) for r in jira_dc.requests)


def test_the_stand_in_describes_the_site_and_the_tokens_user(
    jira: JiraAPI, bot: User, jira_dc: JiraAPI
) -> None:
    cloud = jira_session(jira.site, f"{EMAIL}:{API_TOKEN}")
    assert cloud.server_info()["deploymentType"] == "Cloud"
    assert cloud.myself()["accountId"] == bot.account_id
    data_center = jira_session(jira_dc.site, PAT)
    assert data_center.server_info()["deploymentType"] == "Server"
    assert data_center.myself()["name"] == "resolver"
    [info] = [r for r in jira.requests if r.path.endswith("/serverInfo")]
    assert info.status == 200
