"""A job's status comment is tagged with a comment property naming the job, so that a retry
whose post lost its answer finds the comment and edits it instead of posting a second one."""

from __future__ import annotations

from datetime import timedelta

import pytest

from integrations.jira.provider import STATUS_PROPERTY, STATUS_SEARCH_LIMIT, JiraConversation
from resolver import providers
from resolver.callback_errors import (
    CallbackError,
    PermanentCallbackError,
    TransientCallbackError,
)
from tests.conftest import ResolverEnv
from tests.jira_edge.conftest import ISSUE, PAT, context, store_site_token
from tests.support.jira_api import Issue, JiraAPI

POST = "POST /rest/api/2/issue/{issueIdOrKey}/comment"
LIST = "GET /rest/api/2/issue/{issueIdOrKey}/comment"


def the_issue(jira: JiraAPI) -> Issue:
    issue = jira.issue_by_key(ISSUE)
    assert issue is not None
    return issue


def test_the_status_message_of_a_job_is_found_by_its_job_only(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    ref = conversation.post("**Queued**", status_of=12)
    assert conversation.find_status(12, since) == ref
    assert conversation.find_status(1, since) is None
    assert conversation.find_status(120, since) is None


def test_the_tag_is_a_property_beside_the_text_not_in_it(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    conversation.post("**Queued**", status_of=12)
    [comment] = the_issue(jira).comments
    assert comment.body == "*Queued*"
    assert comment.properties == {STATUS_PROPERTY: {"job_id": 12}}


def test_a_message_posted_without_status_of_is_never_found(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    conversation.post("Job 12: **Queued**")
    [comment] = the_issue(jira).comments
    assert comment.properties == {}
    assert conversation.find_status(12, since) is None


def test_someone_elses_comment_with_the_tag_is_never_found(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    ann = jira.add_user("Ann Example")
    jira.add_comment(ISSUE, "Queued", ann, properties={STATUS_PROPERTY: {"job_id": 12}})
    assert conversation.find_status(12, since) is None
    ref = conversation.post("Queued", status_of=12)
    jira.add_comment(ISSUE, "Copied", ann, properties={STATUS_PROPERTY: {"job_id": 12}})
    assert conversation.find_status(12, since) == ref


def test_comments_created_before_since_are_not_looked_at(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    conversation.post("Queued", status_of=12)
    [comment] = the_issue(jira).comments
    assert conversation.find_status(12, comment.created) is not None
    assert conversation.find_status(12, comment.created + timedelta(milliseconds=1)) is None


def test_only_the_newest_comments_are_read_with_their_properties(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    conversation.find_status(12, jira.now)
    [call] = jira.calls(LIST)
    assert call.query == {
        "expand": ["properties"],
        "maxResults": [str(STATUS_SEARCH_LIMIT)],
        "orderBy": ["-created"],
    }


def test_a_post_whose_answer_was_lost_is_found_and_edited(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    jira.fail(POST, 504, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("**Queued**", status_of=12)
    ref = conversation.find_status(12, since)
    assert ref is not None
    conversation.edit(ref, "**Done**")
    [comment] = the_issue(jira).comments
    assert (comment.body, comment.properties) == ("*Done*", {STATUS_PROPERTY: {"job_id": 12}})
    assert conversation.find_status(12, since) == ref


def test_on_data_center_the_bot_is_known_by_its_username(
    env: ResolverEnv, jira_dc: JiraAPI
) -> None:
    store_site_token(jira_dc.site, PAT)
    conversation = providers.conversation("jira", context(jira_dc.site), None)
    since = jira_dc.now
    ref = conversation.post("Queued", status_of=12)
    assert conversation.find_status(12, since) == ref


@pytest.mark.parametrize(
    ("status", "fate"),
    [
        (503, TransientCallbackError),
        (429, TransientCallbackError),
        (403, PermanentCallbackError),
        (404, PermanentCallbackError),
    ],
)
def test_find_status_errors_have_the_fate_of_every_call(
    conversation: JiraConversation, jira: JiraAPI, status: int, fate: type[CallbackError]
) -> None:
    jira.fail(LIST, status)
    with pytest.raises(CallbackError) as failed:
        conversation.find_status(12, jira.now)
    assert type(failed.value) is fate
    assert failed.value.status == status
