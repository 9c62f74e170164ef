"""Linear as a conversation: replies in the trigger's thread, Markdown as written, 👀 on the
triggering comment, a history without the bot, and a clear message when no token is stored."""

from __future__ import annotations

import pytest

from integrations import registry
from integrations.linear.provider import HISTORY_LIMIT, LinearConversation
from integrations.linear.standin.api import Actor, LinearAPI, LinearComment, LinearIssue
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import Comment, History
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from tests.conftest import ResolverEnv
from tests.integrations.linear.conftest import (
    API_KEY,
    OAUTH_TOKEN,
    ORGANIZATION,
    comment_context,
    label_context,
    store_workspace_token,
)


def test_post_replies_in_the_thread_and_edit_replaces_it(
    conversation: LinearConversation, linear: LinearAPI, trigger: LinearComment, app: Actor
) -> None:
    text = "**Queued**: see [the plan](https://example.com/plan)\n- `step 1`"
    ref = conversation.post(text)
    posted = linear.comments[ref["comment_id"]]
    assert ref == {"comment_id": posted.id}
    assert (posted.body, posted.parent_id, posted.author) == (text, trigger.id, app)
    conversation.edit(ref, "**Done**")
    assert posted.body == "**Done**"


def test_a_reply_to_a_reply_goes_under_the_threads_root(
    env: ResolverEnv, linear: LinearAPI, app: Actor, issue: LinearIssue, ann: Actor
) -> None:
    root = linear.add_comment(issue, "export is broken", ann)
    reply = linear.add_comment(issue, "@resolver take this", ann, parent_id=root.id)
    store_workspace_token(ORGANIZATION, OAUTH_TOKEN)
    ref = registry.conversation(
        "linear", read_trigger(comment_context(issue, reply)), None, get_settings()
    ).post("Queued")
    assert linear.comments[ref["comment_id"]].parent_id == root.id


def test_a_label_trigger_posts_at_the_top_and_acknowledges_nothing(
    env: ResolverEnv, linear: LinearAPI, app: Actor, issue: LinearIssue
) -> None:
    store_workspace_token(ORGANIZATION, OAUTH_TOKEN)
    conversation = registry.conversation(
        "linear", read_trigger(label_context(issue)), None, get_settings()
    )
    conversation.acknowledge()
    assert linear.requests == []
    ref = conversation.post("Queued")
    assert linear.comments[ref["comment_id"]].parent_id is None


def test_acknowledge_puts_eyes_on_the_triggering_comment(
    conversation: LinearConversation, trigger: LinearComment, app: Actor
) -> None:
    conversation.acknowledge()
    assert trigger.reactions == [(app.id, "eyes")]


def test_history_leaves_out_the_bot(
    conversation: LinearConversation,
    linear: LinearAPI,
    issue: LinearIssue,
    trigger: LinearComment,
    ann: Actor,
) -> None:
    conversation.post("Queued")
    linear.add_comment(issue, "also the CSV path", ann, parent_id=trigger.id)
    assert conversation.history() == History(
        comments=(
            Comment("ann", "@resolver fix the export"),
            Comment("ann", "also the CSV path"),
        )
    )
    [call] = linear.calls("issue")
    assert call.variables["last"] == HISTORY_LIMIT


def test_history_recognises_a_bot_user_by_name_and_by_id(
    env: ResolverEnv,
    linear: LinearAPI,
    issue: LinearIssue,
    trigger: LinearComment,
    service_user: Actor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a personal API key the bot is a member: named like the bot, or listed by id."""
    other_bot = linear.add_user("Deploy Helper", display_name="deploy")
    linear.add_comment(issue, "Deployed.", other_bot)
    monkeypatch.setenv("RESOLVER_BOT_ACCOUNT_IDS", other_bot.id)
    get_settings.cache_clear()
    store_workspace_token(ORGANIZATION, API_KEY)
    conversation = registry.conversation(
        "linear", read_trigger(comment_context(issue, trigger)), None, get_settings()
    )
    conversation.post("Queued")
    assert conversation.history().comments == (Comment("ann", "@resolver fix the export"),)


def test_a_workspace_without_a_token_says_how_to_store_one(
    env: ResolverEnv, linear: LinearAPI, issue: LinearIssue, trigger: LinearComment
) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        registry.conversation(
            "linear", read_trigger(comment_context(issue, trigger)), None, get_settings()
        )
    hint = 'printf %s "$TOKEN" | resolver tokens set --provider linear --installation '
    assert hint + ORGANIZATION in str(failed.value)
    assert linear.requests == []


def test_a_trigger_without_an_organization_is_permanent(
    env: ResolverEnv, issue: LinearIssue
) -> None:
    with pytest.raises(PermanentCallbackError, match="organization_id"):
        registry.conversation("linear", read_trigger({"issue_id": issue.id}), None, get_settings())


def test_a_refused_token_is_permanent(
    env: ResolverEnv, issue: LinearIssue, trigger: LinearComment
) -> None:
    store_workspace_token(ORGANIZATION, "lin_oauth_revoked-token-value")
    conversation = registry.conversation(
        "linear", read_trigger(comment_context(issue, trigger)), None, get_settings()
    )
    with pytest.raises(PermanentCallbackError) as failed:
        conversation.post("Queued")
    assert failed.value.status == 401
    assert "revoked-token-value" not in str(failed.value)
