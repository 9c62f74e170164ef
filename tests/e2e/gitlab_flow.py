"""The GitLab side of the end-to-end tests: a project on the stand-in, its bot token, its notes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from integrations.gitlab.standin.api import DEVELOPER, GitLabAPI, MergeRequest, Note, Project
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from resolver.core.settings import get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.e2e.stack import REPO_FILES
from tests.integrations.deliveries import SECRETS, load

PROJECT = "group/widgets"
IID = 7
TITLE = "add() subtracts instead of adding"
BOT = "resolver"
BOT_TOKEN = "glpat-" + "E2eB0tT0ken" * 2


@pytest.fixture
def gitlab_api() -> Iterator[GitLabAPI]:
    """The GitLab stand-in; the bot acts with `BOT_TOKEN` (a fixture: import it into a conftest)."""
    api = GitLabAPI()
    api.add_token(BOT_TOKEN, BOT)
    yield api
    api.close()


@pytest.fixture
def gitlab_git(tmp_path: Path, gitlab_api: GitLabAPI) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; a password is accepted when the GitLab stand-in knows it."""
    with GitHttpServer(tmp_path / "git", accepts=gitlab_api.tokens.__contains__) as server:
        yield server


def gitlab_settings(api: GitLabAPI) -> dict[str, str]:
    return {"RESOLVER_GITLAB_WEBHOOK_TOKEN": SECRETS["gitlab"], "RESOLVER_GITLAB_URL": api.url}


def widgets(
    api: GitLabAPI, git: GitHttpServer, files: Mapping[str, str] = REPO_FILES
) -> tuple[Project, Path]:
    """`group/widgets` with `files` (a broken add() and its test), and issue #7; alice is a
    Developer."""
    bare = create_bare_repo(git.root, PROJECT, dict(files))
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


def _note_payload(
    api: GitLabAPI, project: Project, fixture: str, note: Note, author: str, url: str
) -> dict[str, Any]:
    """A recorded `Note Hook` (`fixture`) made to carry `note`, by `author`, on `project`."""
    web_url = f"{api.url}/{PROJECT}"
    payload = load("gitlab", fixture)
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
        url=f"{web_url}/-/{url}#note_{note.id}",
    )
    return payload


def _on_merge_request(payload: dict[str, Any], merge_request: MergeRequest) -> dict[str, Any]:
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


def note_hook(api: GitLabAPI, project: Project, text: str, author: str = "alice") -> dict[str, Any]:
    """A recorded `Note Hook` on issue #7, for a note the stand-in knows (so it can take 👀)."""
    note = api.add_note(project, "issues", IID, text, author)
    payload = _note_payload(api, project, "Note_Hook__on_issue", note, author, f"issues/{IID}")
    payload["issue"].update(iid=IID, title=TITLE, description="", state="opened")
    return payload


def merge_request_note(
    api: GitLabAPI, project: Project, merge_request: MergeRequest, text: str, author: str
) -> dict[str, Any]:
    """The recorded `Note Hook` on a merge request, for a note the stand-in knows."""
    note = api.add_note(project, "merge_requests", merge_request.iid, text, author)
    where = f"merge_requests/{merge_request.iid}"
    payload = _note_payload(api, project, "Note_Hook__on_merge_request", note, author, where)
    payload["merge_request"].update(source_project_id=project.id, target_project_id=project.id)
    return _on_merge_request(payload, merge_request)


def diff_note_hook(
    api: GitLabAPI, project: Project, merge_request: MergeRequest, note: Note, author: str
) -> dict[str, Any]:
    """A recorded `Note Hook` for `note`, a diff note the stand-in knows on `merge_request`."""
    where = f"merge_requests/{merge_request.iid}"
    fixture = "Note_Hook__diff_note_on_merge_request"
    payload = _note_payload(api, project, fixture, note, author, where)
    payload["object_attributes"].update(
        type=note.type, discussion_id=note.discussion_id, position=note.position
    )
    return _on_merge_request(payload, merge_request)


def bot_notes_on(api: GitLabAPI, iid: int) -> list[str]:
    """What the bot wrote on merge request `iid`."""
    bot = api.add_user(BOT)
    return [
        n.body
        for n in api.notes.values()
        if n.author == bot and (n.kind, n.iid) == ("merge_requests", iid)
    ]
