"""A tagged message (`status-12`, `notice-3`, `reply-40`) carries its tag in a comment property,
so that a retry whose post lost its answer finds the comment instead of posting a second one."""

from __future__ import annotations

from datetime import timedelta

import pytest

from integrations import registry
from integrations.jira.provider import FIND_LIMIT, TAG_PROPERTY, JiraConversation
from integrations.jira.standin.api import Issue, JiraAPI, User
from resolver.contract.errors import (
    CallbackError,
    PermanentCallbackError,
    TransientCallbackError,
)
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from tests.conftest import ResolverEnv
from tests.integrations.jira.conftest import ISSUE, PAT, context, store_site_token

POST = "POST /rest/api/2/issue/{issueIdOrKey}/comment"
LIST = "GET /rest/api/2/issue/{issueIdOrKey}/comment"


def the_issue(jira: JiraAPI) -> Issue:
    issue = jira.issue_by_key(ISSUE)
    assert issue is not None
    return issue


def test_a_message_is_found_by_its_whole_tag_only(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    ref = conversation.post("**Queued**", tag="status-12")
    assert conversation.find("status-12", since) == ref
    for other in ("status-1", "status-120", "notice-12", "status-12 ", "tatus-12"):
        assert conversation.find(other, since) is None, other


def test_messages_of_different_kinds_with_the_same_number_are_told_apart(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    status = conversation.post("**Queued**", tag="status-12")
    notice = conversation.post("The budget is spent.", tag="notice-12")
    assert conversation.find("status-12", since) == status
    assert conversation.find("notice-12", since) == notice
    assert status != notice


def test_the_tag_is_a_property_beside_the_text_not_in_it(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    conversation.post("**Queued**", tag="status-12")
    [comment] = the_issue(jira).comments
    assert comment.body == "*Queued*"
    assert comment.properties == {TAG_PROPERTY: {"tag": "status-12"}}
    assert TAG_PROPERTY == "resolver.message"


def test_a_message_posted_without_a_tag_is_never_found(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    conversation.post("Job 12: **Queued**")
    [comment] = the_issue(jira).comments
    assert comment.properties == {}
    assert conversation.find("status-12", since) is None


@pytest.mark.parametrize("tag", ["", "status", "12", "Status-12", "status-12 ", "status_12"])
def test_a_tag_that_is_not_a_message_tag_is_refused_before_posting(
    conversation: JiraConversation, jira: JiraAPI, tag: str
) -> None:
    with pytest.raises(ValueError, match="not a message tag"):
        conversation.post("Queued", tag=tag)
    assert jira.requests == []


@pytest.mark.parametrize(
    "value", [{"job_id": 12}, {"tag": 12}, "status-12", ["status-12"], {"tag": None}]
)
def test_a_property_of_another_shape_is_no_tag(
    conversation: JiraConversation, jira: JiraAPI, bot: User, value: object
) -> None:
    since = jira.now
    jira.add_comment(ISSUE, "Queued", bot, properties={TAG_PROPERTY: value})
    assert conversation.find("status-12", since) is None


def test_someone_elses_comment_with_the_tag_is_never_found(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    ann = jira.add_user("Ann Example")
    jira.add_comment(ISSUE, "Queued", ann, properties={TAG_PROPERTY: {"tag": "status-12"}})
    assert conversation.find("status-12", since) is None
    ref = conversation.post("Queued", tag="status-12")
    jira.add_comment(ISSUE, "Copied", ann, properties={TAG_PROPERTY: {"tag": "status-12"}})
    assert conversation.find("status-12", since) == ref


def test_comments_created_before_since_are_not_looked_at(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    conversation.post("Queued", tag="reply-40")
    [comment] = the_issue(jira).comments
    assert conversation.find("reply-40", comment.created) is not None
    assert conversation.find("reply-40", comment.created + timedelta(milliseconds=1)) is None


def test_only_the_newest_comments_are_read_with_their_properties(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    conversation.find("status-12", jira.now)
    [call] = jira.calls(LIST)
    assert call.query == {
        "expand": ["properties"],
        "maxResults": [str(FIND_LIMIT)],
        "orderBy": ["-created"],
    }


def test_a_post_whose_answer_was_lost_is_found_and_edited(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    since = jira.now
    jira.fail(POST, 504, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("**Queued**", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None
    conversation.edit(ref, "**Done**")
    [comment] = the_issue(jira).comments
    assert (comment.body, comment.properties) == ("*Done*", {TAG_PROPERTY: {"tag": "status-12"}})
    assert conversation.find("status-12", since) == ref


def test_on_data_center_the_bot_is_known_by_its_username(
    env: ResolverEnv, jira_dc: JiraAPI
) -> None:
    store_site_token(jira_dc.site, PAT)
    conversation = registry.conversation(
        "jira", read_trigger(context(jira_dc.site)), None, get_settings()
    )
    since = jira_dc.now
    ref = conversation.post("Queued", tag="notice-3")
    assert conversation.find("notice-3", since) == ref


@pytest.mark.parametrize(
    ("status", "fate"),
    [
        (503, TransientCallbackError),
        (429, TransientCallbackError),
        (403, PermanentCallbackError),
        (404, PermanentCallbackError),
    ],
)
def test_find_errors_have_the_fate_of_every_call(
    conversation: JiraConversation, jira: JiraAPI, status: int, fate: type[CallbackError]
) -> None:
    jira.fail(LIST, status)
    with pytest.raises(CallbackError) as failed:
        conversation.find("status-12", jira.now)
    assert type(failed.value) is fate
    assert failed.value.status == status
