"""The GitHub side of the end-to-end tests: a repository on the stand-in and its webhooks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from integrations.github.standin.api import GitHubAPI, Pull, Repo
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from resolver.store.models import Job
from tests.e2e.stack import REPO_FILES, Stack, by_step, fix_script, ingress
from tests.integrations.deliveries import SECRETS, github, load, post
from tests.integrations.github.conftest import APP_ID, INSTALLATION_ID, REPO
from tests.support.llm_server import Reply, finish, tool

ALICE_ID = 5001
DOCSTRING = '    """Add two numbers."""\n'


def github_settings(api: GitHubAPI, key_file: Path) -> dict[str, str]:
    return {
        "RESOLVER_GITHUB_WEBHOOK_SECRET": SECRETS["github"],
        "RESOLVER_GITHUB_API_URL": api.base_url,
        "RESOLVER_GITHUB_APP_ID": APP_ID,
        "RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH": str(key_file),
    }


def widgets(
    api: GitHubAPI, git: GitHttpServer, files: Mapping[str, str] = REPO_FILES
) -> tuple[Repo, Path]:
    """`octo/widgets` with `files` (a broken add() and its test); alice may write, dave may
    not."""
    bare = create_bare_repo(git.root, REPO, dict(files))
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


def mention(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitHubAPI,
    git: GitHttpServer,
    text: str = "@resolver please fix add()",
) -> int:
    """alice (linked, a writer) mentions the bot on issue 7 with a worker running; the job id."""
    stack.link("alice", "github", str(ALICE_ID), "alice")
    stack.start_worker()
    client = ingress(stack, monkeypatch)
    answer = post(client, github("issue_comment.created", issue_comment(api, git, text)))
    assert answer.status_code == 202, answer.text
    return int(answer.json()["job_id"])


def mention_and_finish(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitHubAPI,
    git: GitHttpServer,
    text: str = "@resolver please fix add()",
) -> Job:
    """`mention`, then wait for the job and its callbacks to end; the job as it ended."""
    job_id = mention(stack, monkeypatch, api, git, text)
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return stack.job(job_id)


def fixed_in_a_pull(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, api: GitHubAPI, git: GitHttpServer
) -> tuple[Job, Pull]:
    """alice asks the bot to fix add() on issue 7 and the (scripted) model does: the job as it
    ended, and the draft pull request it opened (the only one)."""
    stack.llm.set_script(by_step(fix_script()))
    job = mention_and_finish(stack, monkeypatch, api, git)
    [pull] = api.pulls
    return job, pull


def document_script() -> list[Reply]:
    """The model's part in a follow-up: a docstring under add()'s line, then finish."""
    return [
        tool(
            "str_replace_editor",
            command="str_replace",
            path="calc.py",
            old_str="def add(a, b):\n",
            new_str="def add(a, b):\n" + DOCSTRING,
        ),
        finish("changed_code", "Documented add()."),
    ]


def _on_widgets(payload: dict[str, Any], git: GitHttpServer, login: str, user_id: int) -> None:
    user = {"login": login, "id": user_id, "type": "User"}
    payload["sender"] = user
    payload["repository"].update(
        full_name=REPO, name=REPO.split("/")[1], clone_url=git.url_for(REPO), default_branch="main"
    )
    payload["installation"] = {"id": INSTALLATION_ID}


def _pull_json(payload: dict[str, Any], number: int, head: str, author: str) -> None:
    payload["pull_request"].update(number=number, title="Fix add()", body="")
    payload["pull_request"]["user"] = {"login": author, "id": 9001, "type": "Bot"}
    payload["pull_request"]["head"].update(ref=head)
    payload["pull_request"]["base"].update(ref="main")


def review_submitted(
    git: GitHttpServer,
    *,
    number: int,
    head: str,
    review_id: int,
    body: str = "",
    state: str = "changes_requested",
    login: str = "alice",
    user_id: int = ALICE_ID,
    author: str = "resolver[bot]",
) -> dict[str, Any]:
    """A recorded pull_request_review.submitted payload: `login` reviewed pull `number`."""
    payload = load("github", "pull_request_review.submitted__approved")
    _on_widgets(payload, git, login, user_id)
    _pull_json(payload, number, head, author)
    payload["review"].update(id=review_id, body=body, state=state)
    payload["review"]["user"] = payload["sender"]
    return payload


def review_comment_created(
    api: GitHubAPI,
    git: GitHttpServer,
    comment_id: int,
    *,
    head: str,
    login: str = "alice",
    user_id: int = ALICE_ID,
) -> dict[str, Any]:
    """A recorded pull_request_review_comment.created payload for a comment on the stand-in."""
    comment = api.review_comments[comment_id]
    payload = load("github", "pull_request_review_comment.created__on_diff")
    _on_widgets(payload, git, login, user_id)
    _pull_json(payload, comment.number, head, "resolver[bot]")
    payload["comment"].update(
        id=comment.id,
        body=comment.body,
        path=comment.path,
        line=comment.line,
        diff_hunk=comment.diff_hunk,
        pull_request_review_id=comment.review_id,
        in_reply_to_id=None,
        user=payload["sender"],
    )
    return payload
