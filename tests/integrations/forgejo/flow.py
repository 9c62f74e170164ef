"""The Forgejo side of the end-to-end tests: the stand-in and a git server, `forgejo/widgets`
with issue 7, the stack's settings, and deliveries made from the recorded payloads to carry
what the stand-in holds. Used by test_e2e.py and by the shared suites' adapter
(tests/e2e/forges.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import pytest

from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Pull, Repo
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from tests.e2e.stack import REPO_FILES
from tests.integrations.deliveries import Delivery
from tests.integrations.forgejo.deliveries import SECRET, headers_for, load

REPO: Final = "forgejo/widgets"
ISSUE: Final = 7
TITLE: Final = "add() subtracts instead of adding"
BOT: Final = "resolver"
BOT_TOKEN: Final = "fjb0t" * 8
STATUS_EDIT: Final = "PATCH /repos/{owner}/{repo}/issues/comments/{id}"


@pytest.fixture
def forgejo_standin() -> Iterator[ForgejoAPI]:
    with ForgejoAPI() as api:
        api.add_token(BOT_TOKEN, BOT)
        yield api


@pytest.fixture
def forgejo_git(tmp_path: Path) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; only the bot's token may push."""
    with GitHttpServer(tmp_path / "forgejo-git", tokens={BOT_TOKEN}) as server:
        yield server


def widgets(
    api: ForgejoAPI, git: GitHttpServer, files: Mapping[str, str] = REPO_FILES
) -> tuple[Repo, Path]:
    """`forgejo/widgets` with `files` on main (by default a broken add() and its test), issue
    #7; the bot administers it, alice writes, bob reads."""
    bare = create_bare_repo(git.root, REPO, dict(files))
    repo = api.add_repo(REPO, git.url_for(REPO))
    for login, mode in ((BOT, "admin"), ("alice", "write"), ("bob", "read")):
        api.add_collaborator(repo, login, mode)
    api.add_issue(repo, ISSUE)
    return repo, bare


def settings(api: ForgejoAPI) -> dict[str, str]:
    return {
        "RESOLVER_FORGEJO_URL": api.url,
        "RESOLVER_FORGEJO_TOKEN": BOT_TOKEN,
        "RESOLVER_FORGEJO_WEBHOOK_SECRET": SECRET,
    }


def repository_json(api: ForgejoAPI, repo: Repo) -> dict[str, Any]:
    """The `repository` of a delivery about `repo`, as the stand-in holds it."""
    return {
        "full_name": REPO,
        "name": REPO.split("/")[1],
        "clone_url": repo.clone_url,
        "default_branch": repo.default_branch,
        "html_url": f"{api.url}/{REPO}",
    }


def mention(api: ForgejoAPI, repo: Repo, login: str, text: str) -> dict[str, Any]:
    """The recorded `issue_comment` made to carry `login`'s comment `text` on issue 7, as the
    stand-in now holds it."""
    comment = api.add_comment(repo, ISSUE, text, login)
    payload: dict[str, Any] = copy.deepcopy(load("issue_comment.created__on_issue"))
    user = api.user(api.user_id(login))
    payload["sender"] = payload["comment"]["user"] = user
    payload["comment"].update(id=comment.id, body=text)
    payload["issue"].update(number=ISSUE, title=TITLE, body="It returns a - b.")
    payload["repository"].update(repository_json(api, repo))
    return payload


def pull_comment(api: ForgejoAPI, repo: Repo, pull: Pull, login: str, text: str) -> dict[str, Any]:
    """The recorded `pull_request_comment` made to carry `login`'s comment `text` on `pull`."""
    comment = api.add_comment(repo, pull.number, text, login)
    comment.is_pull = True
    payload: dict[str, Any] = copy.deepcopy(load("pull_request_comment.created__on_pull_request"))
    user = api.user(api.user_id(login))
    payload["sender"] = payload["comment"]["user"] = user
    payload["comment"].update(id=comment.id, body=text)
    url = f"{api.url}/{REPO}/pulls/{pull.number}"
    payload["issue"].update(number=pull.number, title=pull.title, body=pull.body, html_url=url)
    payload["pull_request"].update(number=pull.number, title=pull.title, html_url=url)
    payload["pull_request"]["user"] = api.user(pull.user_id)
    payload["pull_request"]["head"].update(label=pull.head, ref=pull.head, sha=None)
    payload["pull_request"]["base"].update(label=pull.base, ref=pull.base)
    payload["repository"].update(repository_json(api, repo))
    return payload


def push(api: ForgejoAPI, repo: Repo, ref: str, after: str, pusher: str) -> dict[str, Any]:
    """The recorded `push` made to say `ref` is now at `after`."""
    payload: dict[str, Any] = copy.deepcopy(load("push__default_branch"))
    payload.update(ref=ref, after=after)
    payload["sender"] = payload["pusher"] = api.user(api.user_id(pusher))
    payload["repository"].update(repository_json(api, repo))
    return payload


def delivery(payload: dict[str, Any], event: str, *, secret: str = SECRET) -> Delivery:
    body = json.dumps(payload).encode()
    return Delivery("/webhooks/forgejo", body, headers_for(event, body, secret=secret))


def said(api: ForgejoAPI, number: int = ISSUE) -> list[str]:
    """What the bot wrote on issue or pull request `number`, in order."""
    bot = api.user_id(BOT)
    comments = sorted(api.comments.values(), key=lambda c: c.id)
    return [c.body for c in comments if (c.user_id, c.number) == (bot, number)]
