"""The Jira side of the end-to-end tests: a site on the stand-in, its webhooks, and what a
Resolver admin stores for a ticket tracker whose code lives on GitHub (Linear's tests use that
part too).

A tracker hosts no code: a request works on the repository routed to its project or team, and
acts on GitHub with the requester's own token (there is no App installation in the trigger).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from integrations import registry
from integrations.github.standin.api import GitHubAPI
from integrations.jira.standin.api import API, Comment, Issue, JiraAPI, User
from resolver.core.settings import get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.repo_defaults import set_route
from resolver.store.vault import Vault, store_credential
from tests.e2e.github_flow import ALICE_ID
from tests.integrations.deliveries import SECRETS, load
from tests.integrations.github.conftest import REPO

GITHUB_TOKEN = "ghp_" + "Xq7Lm2" * 6  # a classic personal access token's shape
JIRA_EMAIL = "resolver-bot@example.com"
JIRA_TOKEN = "ATATT3xFfGF0" + "Tz4" * 12  # an Atlassian API token's shape
PROJECT = "SP"
ISSUE_KEY = f"{PROJECT}-10"
TITLE = "add() subtracts instead of adding"


@dataclass(frozen=True)
class JiraSite:
    api: JiraAPI
    bot: User
    alice: User
    issue: Issue


def jira_site(api: JiraAPI) -> JiraSite:
    """A Jira Cloud site with the bot's API token, alice, and one ticket about add()."""
    bot = api.add_user("Resolver", account_type="app")
    api.add_api_token(JIRA_EMAIL, JIRA_TOKEN, bot)
    alice = api.add_user("Alice Example")
    issue = api.add_issue(ISSUE_KEY, summary=TITLE, description="2 + 3 gives -1.")
    return JiraSite(api, bot, alice, issue)


def jira_settings(site: JiraSite, github: GitHubAPI) -> dict[str, str]:
    """The service's settings: the webhook secret, the bot's Jira account, GitHub's API."""
    return {
        "RESOLVER_JIRA_WEBHOOK_SECRET": SECRETS["jira"],
        "RESOLVER_BOT_ACCOUNT_IDS": site.bot.account_id,
        "RESOLVER_GITHUB_API_URL": github.base_url,
    }


def comment_created(site: JiraSite, text: str) -> dict[str, Any]:
    """A recorded `comment_created` payload for alice's new comment on the site's ticket; its
    `self` links point at the stand-in, so they name the site to answer on."""
    comment = site.api.add_comment(site.issue.key, text, site.alice)
    payload = load("jira", "comment_created__wiki_markup")
    payload["comment"] = site.api.comment_json(site.issue, comment)
    issue = payload["issue"]
    issue.update(id=str(site.issue.id), key=site.issue.key, self=_issue_url(site, site.issue))
    issue["fields"].update(summary=site.issue.summary, description=site.issue.description)
    issue["fields"]["project"].update(key=PROJECT, self=f"{site.api.site}{API}/project/10000")
    return payload


def mention(site: JiraSite, request: str) -> str:
    """How Jira Cloud's editor writes a mention of the bot in wiki markup."""
    return f"[~accountid:{site.bot.account_id}] {request}"


def _issue_url(site: JiraSite, issue: Issue) -> str:
    return f"{site.api.site}{API}/issue/{issue.id}"


def bot_comments(site: JiraSite) -> list[Comment]:
    return [c for c in site.issue.comments if c.author == site.bot]


def store_installation_token(provider: str, installation: str, secret: str) -> None:
    """What `resolver tokens set --provider <provider> --installation <id>` stores: a Jira
    site's token, a Linear workspace's."""
    _store(provider, secret, installation=installation)


def alice_on_github(github: GitHubAPI, tracker: str, external_id: str) -> None:
    """alice, known on the tracker by `external_id` and on GitHub as `alice` (write access to
    the routed repository), with her own GitHub token stored for the forge to act with."""
    github.add_token(GITHUB_TOKEN, "alice")
    with session_scope() as session:
        accounts.add_user(session, "alice")
        accounts.link_identity(session, "alice", tracker, external_id)
        accounts.link_identity(session, "alice", "github", str(ALICE_ID), "alice")
        user_id = accounts.get_user(session, "alice").id
    _store("github", GITHUB_TOKEN, user_id=user_id)


def route_to_widgets(provider: str, scope: str) -> None:
    """What `resolver routes set <provider> <scope> octo/widgets` stores."""
    with session_scope() as session:
        set_route(session, provider, scope, *registry.check_route(provider, REPO))


def _store(
    provider: str, secret: str, *, user_id: int | None = None, installation: str | None = None
) -> None:
    with session_scope() as session:
        owner = (
            accounts.ensure_installation(session, provider, installation).id
            if installation
            else None
        )
        store_credential(
            session,
            Vault(get_settings().fernet_keys),
            provider=provider,
            kind="pat",
            secret=secret,
            user_id=user_id,
            installation_id=owner,
        )
