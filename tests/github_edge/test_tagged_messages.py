"""A comment whose answer was lost is found again by its hidden tag, where the bot posts it: in
the issue's conversation, or in the review thread of the trigger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from integrations.github.auth import installation_token
from integrations.github.client import GitHubClient
from integrations.github.provider import GitHubConversation
from resolver.callback_errors import PermanentCallbackError, TransientCallbackError
from resolver.config import Settings
from resolver.providers import hidden_tag
from tests.github_edge.conftest import INSTALLATION_ID, REPO
from tests.support.github_api import BOT_LOGIN, GitHubAPI, Repo

COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
REPLIES = "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
LIST_COMMENTS = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"


@pytest.fixture
def client(settings: Settings, repo: Repo) -> GitHubClient:
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
    conversation = GitHubConversation(client, context)
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
    conversation = GitHubConversation(client, issue_context(github_api))
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


@pytest.mark.parametrize(
    ("status", "error"), [(502, TransientCallbackError), (404, PermanentCallbackError)]
)
def test_a_failed_search_is_mapped_like_every_call(
    client: GitHubClient, github_api: GitHubAPI, status: int, error: type[Exception]
) -> None:
    conversation = GitHubConversation(client, issue_context(github_api))
    github_api.fail(LIST_COMMENTS, status)
    with pytest.raises(error):
        conversation.find("status-12", datetime.now(UTC))
