"""The Linear side of the end-to-end tests: a workspace on the stand-in and its webhooks.

Resolver acts in Linear as an OAuth app (`actor=app`), the way Linear recommends for agents; its
token is stored for the workspace's organization id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from integrations.github.standin.api import GitHubAPI
from integrations.linear.standin.api import WORKSPACE, Actor, LinearAPI, LinearComment, LinearIssue
from tests.e2e.jira_flow import TITLE
from tests.integrations.deliveries import SECRETS, load

OAUTH_TOKEN = "lin_oauth_" + "b41c" * 16
ORGANIZATION = "5c8a1d2e-0f3b-4a6c-9d7e-1f2a3b4c5d6e"
TEAM = "ENG"
TEAM_ID = "72b2a2dc-6f4f-4423-9d34-24b5bd10634a"


@dataclass(frozen=True)
class Workspace:
    api: LinearAPI
    bot: Actor
    alice: Actor
    issue: LinearIssue


def workspace(api: LinearAPI) -> Workspace:
    """A workspace with Resolver's app and its token, alice, and one issue about add()."""
    bot = api.add_app("Resolver")
    api.add_oauth_token(OAUTH_TOKEN, bot)
    alice = api.add_user("Alice Example", display_name="alice")
    issue = api.add_issue(f"{TEAM}-42", title=TITLE, description="2 + 3 gives -1.")
    return Workspace(api, bot, alice, issue)


def linear_settings(api: LinearAPI, github: GitHubAPI) -> dict[str, str]:
    """The service's settings: the webhook secret, Linear's and GitHub's APIs."""
    return {
        "RESOLVER_LINEAR_WEBHOOK_SECRET": SECRETS["linear"],
        "RESOLVER_LINEAR_API_URL": api.url,
        "RESOLVER_GITHUB_API_URL": github.base_url,
    }


def mention(request: str) -> str:
    """How Linear's editor writes a mention: a link to the bot's profile."""
    return f"[@resolver](https://linear.app/{WORKSPACE}/profiles/resolver) {request}"


def comment_create(space: Workspace, text: str) -> tuple[LinearComment, dict[str, Any]]:
    """alice's new top-level comment on the issue, and Linear's recorded `Comment` `create`
    payload for it."""
    comment = space.api.add_comment(space.issue, text, space.alice)
    issue = space.api.issue_json(space.issue)
    payload = load("linear", "Comment.create__on_issue")
    user = {**payload["actor"], "id": space.alice.id, "name": space.alice.name}
    payload["actor"] = user
    payload["organizationId"] = ORGANIZATION
    payload["url"] = f"{issue['url']}#comment-{comment.id[:8]}"
    data = payload["data"]
    data.update(id=comment.id, body=text, issueId=space.issue.id, userId=space.alice.id)
    data.update(url=payload["url"], user={**data["user"], "id": space.alice.id})
    data["issue"].update(
        id=space.issue.id,
        identifier=space.issue.identifier,
        title=space.issue.title,
        url=issue["url"],
        teamId=TEAM_ID,
        team={"id": TEAM_ID, "key": TEAM, "name": "Engineering"},
    )
    return comment, payload


def bot_comments(space: Workspace) -> list[LinearComment]:
    return [c for c in space.api.comments.values() if c.author == space.bot]
