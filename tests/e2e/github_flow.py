"""The GitHub side of the end-to-end tests: a repository on the stand-in and its webhooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.stack import REPO_FILES
from tests.github_edge.conftest import APP_ID, INSTALLATION_ID, REPO
from tests.integrations.deliveries import SECRETS, load
from tests.support.git_http import GitHttpServer, create_bare_repo
from tests.support.github_api import GitHubAPI, Repo

ALICE_ID = 5001


def github_settings(api: GitHubAPI, key_file: Path) -> dict[str, str]:
    return {
        "RESOLVER_GITHUB_WEBHOOK_SECRET": SECRETS["github"],
        "RESOLVER_GITHUB_API_URL": api.base_url,
        "RESOLVER_GITHUB_APP_ID": APP_ID,
        "RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH": str(key_file),
    }


def widgets(api: GitHubAPI, git: GitHttpServer) -> tuple[Repo, Path]:
    """`octo/widgets` with a broken add() and its test; alice may write, dave may not."""
    bare = create_bare_repo(git.root, REPO, REPO_FILES)
    repo = api.add_repo(
        REPO, git.url_for(REPO), collaborators={"alice": "write", "dave": "read"}, bare=bare
    )
    return repo, bare


def issue_comment(
    api: GitHubAPI,
    git: GitHttpServer,
    text: str,
    *,
    number: int = 7,
    login: str = "alice",
    user_id: int = ALICE_ID,
    pull_request: bool = False,
) -> dict[str, Any]:
    """A recorded issue_comment.created payload, on the stand-in's repository and comment."""
    name = (
        "issue_comment.created__on_pull_request"
        if pull_request
        else "issue_comment.created__on_issue"
    )
    payload = load("github", name)
    comment_id = api.add_comment(REPO, number, text, login)
    user = {**payload["comment"]["user"], "login": login, "id": user_id, "type": "User"}
    payload["comment"].update(id=comment_id, body=text, user=user)
    payload["sender"] = user
    payload["issue"].update(number=number, title="add() subtracts instead of adding", body="")
    payload["repository"].update(
        full_name=REPO,
        name=REPO.split("/")[1],
        clone_url=git.url_for(REPO),
        default_branch="main",
    )
    payload["installation"] = {"id": INSTALLATION_ID}
    return payload
