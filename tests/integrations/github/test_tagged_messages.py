"""A comment whose answer was lost is found again by its hidden tag, where the bot posts it: in
the issue's conversation, or in the review thread of the trigger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from integrations.github.auth import installation_token
from integrations.github.client import GitHubClient
from integrations.github.provider import GitHubConversation
from integrations.github.standin.api import BOT_LOGIN, GitHubAPI, Repo
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.outbound import hidden_tag
from resolver.contract.triggers import read_trigger
from resolver.core.settings import Settings
from tests.conftest import ResolverEnv
from tests.integrations.github.conftest import INSTALLATION_ID, REPO

COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
REPLIES = "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
LIST_COMMENTS = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
WHO_AM_I = "GET /user"


@pytest.fixture
def client(settings: Settings, repo: Repo, resolver_env: ResolverEnv) -> GitHubClient:
    """The bot's own comments are told by its name in the settings of the environment (never a
    developer's `.env`), so the test runs under a Resolver environment of its own."""
    return GitHubClient(settings, lambda: installation_token(INSTALLATION_ID, settings))


def issue_context(github_api: GitHubAPI) -> dict[str, Any]:
    trigger = github_api.add_comment(REPO, 5, "@resolver please fix", "alice")
    return {"repo": REPO, "number": 5, "comment_kind": "issue_comment", "comment_id": trigger}


def review_context(github_api: GitHubAPI) -> dict[str, Any]:
    root = github_api.add_review_comment(REPO, 7, "@resolver simpler", "alice", "a.py", 3)
    return {
        "repo": REPO,
        "number": 7,
        "is_pull_request": True,
        "comment_kind": "review_comment",
        "comment_id": root,
    }


def bot_bodies(github_api: GitHubAPI) -> list[str]:
    comments = [*github_api.comments.values(), *github_api.review_comments.values()]
    return [c.body for c in comments if c.login == BOT_LOGIN]


@pytest.mark.parametrize(("where", "route"), [("issue", COMMENTS), ("review", REPLIES)])
def test_a_comment_whose_answer_was_lost_is_found_and_edited_with_its_tag(
    client: GitHubClient, github_api: GitHubAPI, where: str, route: str
) -> None:
    context = issue_context(github_api) if where == "issue" else review_context(github_api)
    conversation = GitHubConversation(client, read_trigger(context))
    since = datetime.now(UTC) - timedelta(seconds=1)
    github_api.fail(route, 502, applied=True)

    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None and (ref["kind"], ref["tag"]) == (context["comment_kind"], "status-12")
    for other in ("status-1", "status-120", "notice-12"):
        assert conversation.find(other, since) is None
    conversation.edit(ref, "Done")

    assert bot_bodies(github_api) == [f"Done\n{hidden_tag('status-12')}"]


def test_only_the_bots_own_tagged_comments_since_the_first_try_count(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    conversation = GitHubConversation(client, read_trigger(issue_context(github_api)))
    github_api.add_comment(REPO, 5, f"copied\n{hidden_tag('status-12')}", "alice")
    github_api.add_comment(REPO, 6, f"another issue\n{hidden_tag('status-12')}", BOT_LOGIN)
    plain = conversation.post("an untagged reply")
    assert conversation.find("status-12", datetime.now(UTC) - timedelta(minutes=5)) is None

    found = conversation.post("Queued", tag="status-12")
    assert conversation.find("status-12", datetime.now(UTC) - timedelta(minutes=5)) == found
    assert conversation.find("status-12", datetime.now(UTC) + timedelta(minutes=5)) is None
    assert plain != found
    [*_, listing] = github_api.calls(LIST_COMMENTS)
    assert "since" in listing.query
    # alice's copy made find ask whom the token acts as: GitHub refuses an installation token.
    assert [call.status for call in github_api.calls(WHO_AM_I)] == [403]


def test_the_common_path_does_not_ask_whom_the_token_acts_as(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    conversation = GitHubConversation(client, read_trigger(issue_context(github_api)))
    ref = conversation.post("Queued", tag="status-12")
    assert conversation.find("status-12", datetime.now(UTC) - timedelta(minutes=5)) == ref
    assert conversation.find("status-13", datetime.now(UTC) - timedelta(minutes=5)) is None
    assert github_api.calls(WHO_AM_I) == []


def test_with_a_users_token_that_users_tagged_comment_is_ours(
    settings: Settings, repo: Repo, github_api: GitHubAPI, resolver_env: ResolverEnv
) -> None:
    """A job without the App acts with the requester's token, so its comments are theirs."""
    github_api.add_token("alice-token", "alice")
    conversation = GitHubConversation(
        GitHubClient(settings, lambda: "alice-token"), read_trigger(issue_context(github_api))
    )
    since = datetime.now(UTC) - timedelta(seconds=1)
    github_api.add_comment(REPO, 5, f"someone else's\n{hidden_tag('status-12')}", "mallory")
    github_api.fail(COMMENTS, 502, applied=True)

    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None
    assert github_api.comments[ref["id"]].login == "alice"
    assert github_api.comments[ref["id"]].body == f"Queued\n{hidden_tag('status-12')}"
    assert [call.status for call in github_api.calls(WHO_AM_I)] == [200]
    github_api.fail(WHO_AM_I, 502)
    with pytest.raises(TransientCallbackError):  # not "none found": that would post twice
        conversation.find("status-12", since)

    github_api.add_token("mallory-token", "mallory")
    as_mallory = GitHubConversation(
        GitHubClient(settings, lambda: "mallory-token"), read_trigger(issue_context(github_api))
    )
    assert as_mallory.find("status-12", since) is not None  # mallory's own copy, as mallory
    github_api.add_token("bob-token", "bob")
    as_bob = GitHubConversation(
        GitHubClient(settings, lambda: "bob-token"), read_trigger(issue_context(github_api))
    )
    assert as_bob.find("status-12", since) is None


@pytest.mark.parametrize(
    ("status", "error"), [(502, TransientCallbackError), (404, PermanentCallbackError)]
)
def test_a_failed_search_is_mapped_like_every_call(
    client: GitHubClient, github_api: GitHubAPI, status: int, error: type[Exception]
) -> None:
    conversation = GitHubConversation(client, read_trigger(issue_context(github_api)))
    github_api.fail(LIST_COMMENTS, status)
    with pytest.raises(error):
        conversation.find("status-12", datetime.now(UTC))
