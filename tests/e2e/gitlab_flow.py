"""The GitLab side of the end-to-end tests: a project on the stand-in, its bot token, its notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from resolver.core.settings import get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.e2e.stack import REPO_FILES
from tests.integrations.deliveries import SECRETS, load
from tests.support.git_http import GitHttpServer, create_bare_repo
from tests.support.gitlab_api import DEVELOPER, GitLabAPI, MergeRequest, Note, Project

PROJECT = "group/widgets"
IID = 7
TITLE = "add() subtracts instead of adding"
BOT = "resolver"
BOT_TOKEN = "glpat-" + "E2eB0tT0ken" * 2


def gitlab_settings(api: GitLabAPI) -> dict[str, str]:
    return {"RESOLVER_GITLAB_WEBHOOK_TOKEN": SECRETS["gitlab"], "RESOLVER_GITLAB_URL": api.url}


def widgets(api: GitLabAPI, git: GitHttpServer) -> tuple[Project, Path]:
    """`group/widgets` with a broken add() and its test, and issue #7; alice is a Developer."""
    bare = create_bare_repo(git.root, PROJECT, REPO_FILES)
    project = api.add_project(PROJECT, git.url_for(PROJECT), bare=bare)
    api.add_member(project, api.add_user("alice"), DEVELOPER)
    api.add_issue(project, IID, TITLE)
    return project, bare


def store_bot_token(api: GitLabAPI, token: str = BOT_TOKEN) -> None:
    """What `resolver tokens set --provider gitlab --installation <gitlab_url>` stores."""
    with session_scope() as session:
        installation = accounts.ensure_installation(session, "gitlab", api.url)
        store_credential(
            session,
            Vault(get_settings().fernet_keys),
            provider="gitlab",
            kind="bot",
            secret=token,
            installation_id=installation.id,
        )


def note_hook(api: GitLabAPI, project: Project, text: str, author: str = "alice") -> dict[str, Any]:
    """A recorded `Note Hook` on issue #7, for a note the stand-in knows (so it can take 👀)."""
    note = api.add_note(project, "issues", IID, text, author)
    web_url = f"{api.url}/{PROJECT}"
    payload = load("gitlab", "Note_Hook__on_issue")
    payload["user"] = {"id": note.author, "username": author, "name": author.title()}
    payload["project_id"] = project.id
    payload["project"].update(
        id=project.id,
        path_with_namespace=PROJECT,
        git_http_url=project.clone_url,
        default_branch=project.default_branch,
        web_url=web_url,
    )
    payload["object_attributes"].update(
        id=note.id,
        note=text,
        author_id=note.author,
        project_id=project.id,
        url=f"{web_url}/-/issues/{IID}#note_{note.id}",
    )
    payload["issue"].update(iid=IID, title=TITLE, description="", state="opened")
    return payload


def diff_note_hook(
    api: GitLabAPI, project: Project, merge_request: MergeRequest, note: Note, author: str
) -> dict[str, Any]:
    """A recorded `Note Hook` for `note`, a diff note the stand-in knows on `merge_request`."""
    web_url = f"{api.url}/{PROJECT}"
    payload = load("gitlab", "Note_Hook__diff_note_on_merge_request")
    payload["user"] = {"id": note.author, "username": author, "name": author.title()}
    payload["project_id"] = project.id
    payload["project"].update(
        id=project.id,
        path_with_namespace=PROJECT,
        git_http_url=project.clone_url,
        default_branch=project.default_branch,
        web_url=web_url,
    )
    payload["object_attributes"].update(
        id=note.id,
        note=note.body,
        author_id=note.author,
        project_id=project.id,
        type=note.type,
        discussion_id=note.discussion_id,
        position=note.position,
        url=f"{web_url}/-/merge_requests/{merge_request.iid}#note_{note.id}",
    )
    payload["merge_request"].update(
        iid=merge_request.iid,
        source_branch=merge_request.source_branch,
        target_branch=merge_request.target_branch,
        title=merge_request.title,
        description=merge_request.description,
        author_id=merge_request.author,
        state="opened",
    )
    return payload
