"""Jira as a conversation: replies are comments in wiki markup, edited in place; the history is
the ticket's comments without the bot's own; a site without a stored token says how to add one."""

from __future__ import annotations

import pytest

from integrations import registry
from integrations.jira.provider import HISTORY_LIMIT, JiraConversation
from integrations.jira.standin.api import JiraAPI, User
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import Comment, History
from resolver.contract.triggers import read_trigger
from resolver.core.logs import redact
from resolver.core.settings import get_settings
from tests.conftest import ResolverEnv
from tests.integrations.jira.conftest import API_TOKEN, EMAIL, ISSUE, PAT, context, store_site_token


def test_post_writes_wiki_markup_and_edit_replaces_it(
    conversation: JiraConversation, jira: JiraAPI
) -> None:
    ref = conversation.post("**Queued**: see [the plan](https://example.com/plan)")
    issue = jira.issue_by_key(ISSUE)
    assert issue is not None
    [comment] = issue.comments
    assert ref == {"issue_key": ISSUE, "comment_id": str(comment.id)}
    assert comment.body == "*Queued*: see [the plan|https://example.com/plan]"
    conversation.edit(ref, "**Done**\n- opened `PR #7`")
    assert comment.body == "*Done*\n* opened {{PR #7}}"


def test_acknowledge_sends_nothing(conversation: JiraConversation, jira: JiraAPI) -> None:
    conversation.acknowledge()
    assert jira.requests == []


def test_history_leaves_out_the_bot(
    conversation: JiraConversation, jira: JiraAPI, bot: User
) -> None:
    ann = jira.add_user("Ann Example")
    jira.add_comment(ISSUE, "Exports over 10k rows time out.", ann)
    conversation.post("Queued")
    jira.add_comment(ISSUE, "@resolver please fix", ann)
    assert conversation.history() == History(
        comments=(
            Comment("Ann Example", "Exports over 10k rows time out."),
            Comment("Ann Example", "@resolver please fix"),
        )
    )
    [call] = jira.calls("GET /rest/api/2/issue/{issueIdOrKey}/comment")
    assert call.query["maxResults"] == [str(HISTORY_LIMIT)]


def test_history_recognises_the_bot_by_account_id(
    env: ResolverEnv, jira: JiraAPI, bot: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = jira.add_user("Automation for Jira")
    jira.add_comment(ISSUE, "Working on it", service)
    jira.add_comment(ISSUE, "Thanks", jira.add_user("Ann Example"))
    monkeypatch.setenv("RESOLVER_BOT_ACCOUNT_IDS", f"other, {service.account_id}")
    get_settings.cache_clear()
    store_site_token(jira.site, f"{EMAIL}:{API_TOKEN}")
    history = registry.conversation(
        "jira", read_trigger(context(jira.site)), None, get_settings()
    ).history()
    assert history.comments == (Comment("Ann Example", "Thanks"),)


def test_data_center_with_a_stored_personal_access_token(
    env: ResolverEnv, jira_dc: JiraAPI
) -> None:
    """The bot is recognised by its username; the site keeps its context path."""
    store_site_token(jira_dc.site, PAT)
    conversation = registry.conversation(
        "jira", read_trigger(context(jira_dc.site + "/")), None, get_settings()
    )
    conversation.post("Queued")
    jira_dc.add_comment(ISSUE, "more detail", jira_dc.add_user("Ann", name="ann"))
    assert conversation.history().comments == (Comment("Ann", "more detail"),)
    assert {r.headers["authorization"] for r in jira_dc.requests} == {f"Bearer {PAT}"}


def test_the_configured_site_serves_triggers_without_one(
    env: ResolverEnv, jira: JiraAPI, bot: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESOLVER_JIRA_URL", jira.site)
    get_settings.cache_clear()
    store_site_token(jira.site, f"{EMAIL}:{API_TOKEN}")
    registry.conversation("jira", read_trigger(context(None)), None, get_settings()).post("Queued")
    assert [r.status for r in jira.requests] == [201]


def test_a_site_without_a_token_says_how_to_store_one(env: ResolverEnv, jira: JiraAPI) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        registry.conversation("jira", read_trigger(context(jira.site)), None, get_settings())
    assert (
        f'printf %s "$TOKEN" | resolver tokens set --provider jira --installation {jira.site}'
        in str(failed.value)
    )
    assert jira.requests == []


def test_a_token_stored_for_another_site_is_not_sent(
    env: ResolverEnv, jira: JiraAPI, bot: User
) -> None:
    store_site_token("https://other.atlassian.net", f"{EMAIL}:{API_TOKEN}")
    with pytest.raises(PermanentCallbackError):
        registry.conversation("jira", read_trigger(context(jira.site)), None, get_settings())
    assert jira.requests == []


def test_no_site_at_all_is_permanent(env: ResolverEnv) -> None:
    with pytest.raises(PermanentCallbackError, match="RESOLVER_JIRA_URL"):
        registry.conversation("jira", read_trigger(context(None)), None, get_settings())


def test_a_refused_token_is_permanent_and_masked(
    env: ResolverEnv, jira: JiraAPI, bot: User
) -> None:
    store_site_token(jira.site, f"{EMAIL}:revoked-token-value")
    conversation = registry.conversation(
        "jira", read_trigger(context(jira.site)), None, get_settings()
    )
    with pytest.raises(PermanentCallbackError) as failed:
        conversation.post("Queued")
    assert failed.value.status == 401
    assert "revoked-token-value" not in str(failed.value)
    assert "revoked-token-value" not in redact("token revoked-token-value leaked")


def test_an_edit_without_a_reference_is_permanent(conversation: JiraConversation) -> None:
    with pytest.raises(PermanentCallbackError, match="comment_id"):
        conversation.edit({"issue_key": ISSUE}, "Done")
