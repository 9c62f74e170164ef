"""The Bitbucket side of the end-to-end tests: the stand-in and a git server, `acme/widgets`
with alice's pull request, the stack's settings, and deliveries made from the recorded payloads
to carry what the stand-in holds. Used by test_e2e.py and by the shared suites' adapter
(tests/e2e/forges.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import pytest

from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Pull, Repo
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from tests.e2e.stack import REPO_FILES
from tests.integrations.bitbucket.deliveries import SECRET, headers_for, load
from tests.integrations.deliveries import Delivery

REPO: Final = "acme/widgets"
TITLE: Final = "add() subtracts instead of adding"
BOT: Final = "resolver"
ASKING_BRANCH: Final = "report/add-bug"
BOT_TOKEN: Final = "bbat0k" * 7
STATUS_EDIT: Final = (
    "PUT /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/comments/{comment_id}"
)
STEP_LOG: Final = (
    "GET /repositories/{workspace}/{repo_slug}/pipelines/{pipeline_uuid}/steps/{step_uuid}/log"
)


@pytest.fixture
def bitbucket_standin() -> Iterator[BitbucketAPI]:
    with BitbucketAPI() as api:
        api.add_token(BOT_TOKEN, BOT)
        yield api


@pytest.fixture
def bitbucket_git(tmp_path: Path) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; only the bot's token may push."""
    with GitHttpServer(tmp_path / "bitbucket-git", tokens={BOT_TOKEN}) as server:
        yield server


def widgets(
    api: BitbucketAPI, git: GitHttpServer, files: Mapping[str, str] = REPO_FILES
) -> tuple[Repo, Path]:
    """`acme/widgets` with `files` on main (by default a broken add() and its test); the bot
    administers it, alice writes, bob reads."""
    bare = create_bare_repo(git.root, REPO, dict(files))
    repo = api.add_repo(REPO, git.url_for(REPO))
    for nickname, permission in ((BOT, "admin"), ("alice", "write"), ("bob", "read")):
        api.grant(repo, nickname, permission)
    return repo, bare


def settings(api: BitbucketAPI) -> dict[str, str]:
    return {
        "RESOLVER_BITBUCKET_API_URL": api.api_url,
        "RESOLVER_BITBUCKET_WEB_URL": api.url,
        "RESOLVER_BITBUCKET_TOKEN": BOT_TOKEN,
        "RESOLVER_BITBUCKET_WEBHOOK_SECRET": SECRET,
    }


def asking_pull(api: BitbucketAPI, repo: Repo, bare: Path) -> Pull:
    """alice's pull request that reports the bug (Bitbucket's conversations are pull requests),
    from a branch of main on the remote."""
    run_git("--git-dir", str(bare), "branch", ASKING_BRANCH, "main")
    pull = api.add_pull(repo, ASKING_BRANCH, TITLE, author="alice")
    pull.description = "It returns a - b."
    return pull


def _repository(api: BitbucketAPI) -> dict[str, Any]:
    return {
        "full_name": REPO,
        "name": REPO.split("/")[1],
        "links": {"html": {"href": f"{api.url}/{REPO}"}},
    }


def comment(api: BitbucketAPI, pull: Pull, nickname: str, text: str) -> dict[str, Any]:
    """The recorded `pullrequest:comment_created` made to carry `nickname`'s comment `text` on
    `pull`, as the stand-in now holds it."""
    made = api.add_comment(pull, text, nickname)
    payload: dict[str, Any] = copy.deepcopy(load("pullrequest_comment_created__on_pull"))
    payload["actor"] = payload["comment"]["user"] = api.user(api.add_user(nickname))
    payload["comment"].update(id=made.id)
    payload["comment"]["content"]["raw"] = text
    payload["comment"]["links"]["html"]["href"] = f"{api.url}/{REPO}/pull-requests/{pull.id}"
    payload["pullrequest"].update(id=pull.id, title=pull.title, description=pull.description)
    payload["pullrequest"]["author"] = api.user(pull.author)
    payload["pullrequest"]["source"]["branch"]["name"] = pull.head
    payload["pullrequest"]["destination"]["branch"]["name"] = pull.base
    payload["pullrequest"]["links"]["html"]["href"] = f"{api.url}/{REPO}/pull-requests/{pull.id}"
    payload["repository"].update(_repository(api))
    return payload


def push(api: BitbucketAPI, ref: str, after: str, nickname: str) -> dict[str, Any]:
    """The recorded `repo:push` made to say branch `ref` is now at `after`."""
    payload: dict[str, Any] = copy.deepcopy(load("repo_push__main"))
    payload["actor"] = api.user(api.add_user(nickname))
    change = payload["push"]["changes"][0]
    change["new"].update(name=ref.removeprefix("refs/heads/"))
    change["new"]["target"]["hash"] = after
    payload["repository"].update(_repository(api))
    return payload


def delivery(payload: dict[str, Any], event: str, *, secret: str | None = SECRET) -> Delivery:
    body = json.dumps(payload).encode()
    return Delivery("/webhooks/bitbucket", body, headers_for(event, body, secret=secret))


def said(api: BitbucketAPI, number: int) -> list[str]:
    """What the bot wrote on pull request `number`, in order (its hidden tags left out)."""
    bot = api.add_user(BOT)
    found = sorted(api.comments.values(), key=lambda c: c.id)
    return [c.raw for c in found if (c.user, c.number) == (bot, number)]
