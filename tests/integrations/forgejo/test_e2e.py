"""End to end on Forgejo, with the stack and the scripted model GitHub's end-to-end tests use:
a signed `issue_comment` mentioning the bot, from a collaborator who may write, ends in one
work-in-progress pull request on a real bare git remote and one status comment edited in
place; a stranger's mention is refused before the agent runs; a bad signature is a 401 and no
job. The Forgejo stand-in answers the API, `git http-backend` the pushes."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Repo
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.stack import REPO_FILES, SUMMARY, Stack, fix_script, ingress, running_stack
from tests.integrations.deliveries import Delivery, post
from tests.integrations.forgejo.deliveries import SECRET, headers_for, load

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

REPO = "forgejo/widgets"
ISSUE = 7
TITLE = "add() subtracts instead of adding"
BOT = "resolver"
BOT_TOKEN = "fjb0t" * 8
STATUS_EDIT = "PATCH /repos/{owner}/{repo}/issues/comments/{id}"


@pytest.fixture
def forgejo_api() -> Iterator[ForgejoAPI]:
    with ForgejoAPI() as api:
        api.add_token(BOT_TOKEN, BOT)
        yield api


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; only the bot's token may push."""
    with GitHttpServer(tmp_path / "git", tokens={BOT_TOKEN}) as server:
        yield server


def widgets(api: ForgejoAPI, git: GitHttpServer) -> tuple[Repo, Path]:
    """`forgejo/widgets` with a broken add() and its test, issue #7; the bot administers it,
    alice writes, bob reads."""
    bare = create_bare_repo(git.root, REPO, dict(REPO_FILES))
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


def mention(api: ForgejoAPI, repo: Repo, login: str, text: str) -> dict[str, Any]:
    """The recorded `issue_comment` made to carry `login`'s comment `text` on issue 7, as the
    stand-in now holds it."""
    comment = api.add_comment(repo, ISSUE, text, login)
    payload: dict[str, Any] = copy.deepcopy(load("issue_comment.created__on_issue"))
    user = api.user(api.user_id(login))
    payload["sender"] = payload["comment"]["user"] = user
    payload["comment"].update(id=comment.id, body=text)
    payload["issue"].update(number=ISSUE, title=TITLE, body="It returns a - b.")
    payload["repository"].update(
        full_name=REPO,
        name=REPO.split("/")[1],
        clone_url=repo.clone_url,
        default_branch="main",
        html_url=f"{api.url}/{REPO}",
    )
    return payload


def delivery(payload: dict[str, Any], *, secret: str = SECRET) -> Delivery:
    body = json.dumps(payload).encode()
    return Delivery("/webhooks/forgejo", body, headers_for("issue_comment", body, secret=secret))


def said(api: ForgejoAPI) -> list[str]:
    bot = api.user_id(BOT)
    return [c.body for c in sorted(api.comments.values(), key=lambda c: c.id) if c.user_id == bot]


def run(stack: Stack, monkeypatch: pytest.MonkeyPatch, sent: Delivery) -> int:
    answer = post(ingress(stack, monkeypatch), sent)
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def test_a_mention_from_a_writer_ends_in_one_draft_pull_request(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forgejo_api: ForgejoAPI,
    git_server: GitHttpServer,
) -> None:
    repo, bare = widgets(forgejo_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings(forgejo_api)) as stack:
        stack.llm.push(*fix_script())
        stack.link("alice", "forgejo", str(forgejo_api.user_id("alice")), "alice")
        stack.start_worker()
        payload = mention(forgejo_api, repo, "alice", "@resolver please fix add()")
        job = stack.job(run(stack, monkeypatch, delivery(payload)))
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch == f"resolver/{ISSUE}-add-subtracts-instead-of-adding"
    diff = run_git("--git-dir", str(bare), "diff", "main", job.branch)
    assert "-    return a - b\n+    return a + b" in diff
    log = run_git("--git-dir", str(bare), "log", "-1", "--format=%an%n%B", job.branch)
    assert log.startswith("resolver\n") and "Co-authored-by: alice" in log

    [pull] = forgejo_api.pulls
    assert (pull.head, pull.base, pull.draft) == (job.branch, "main", True)
    assert pull.title.startswith("WIP: ")
    assert f"Fixes #{ISSUE}" in pull.body and SUMMARY in pull.body
    assert job.pr_url == f"{forgejo_api.url}/{REPO}/pulls/{pull.number}"

    # One status comment, edited in place as the job went on; 👀 on the request.
    [status] = said(forgejo_api)
    assert "**Done**" in status and job.pr_url in status
    edits = forgejo_api.calls(STATUS_EDIT)
    assert edits and all(r.status == 200 for r in edits)
    bot = forgejo_api.user_id(BOT)
    eyes = [r.content for r in forgejo_api.reactions if r.user_id == bot and r.comment_id]
    assert eyes == ["eyes"]
    assert BOT_TOKEN not in logs


def test_a_strangers_mention_is_refused_before_the_agent_runs(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forgejo_api: ForgejoAPI,
    git_server: GitHttpServer,
) -> None:
    repo, bare = widgets(forgejo_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings(forgejo_api)) as stack:
        stack.link("mallory", "forgejo", str(forgejo_api.add_user("mallory")), "mallory")
        stack.start_worker()
        payload = mention(forgejo_api, repo, "mallory", "@resolver fix it")
        job = stack.job(run(stack, monkeypatch, delivery(payload)))

    assert (job.state, job.outcome) == ("failed", "refused")
    assert stack.llm.requests == []  # the agent never ran
    assert forgejo_api.pulls == []
    assert run_git("--git-dir", str(bare), "branch", "--format=%(refname:short)").strip() == "main"
    [status] = said(forgejo_api)
    assert "only take requests from people who can push" in status and "@mallory" in status


def test_a_bad_signature_is_refused_and_makes_no_job(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forgejo_api: ForgejoAPI,
    git_server: GitHttpServer,
) -> None:
    repo, _ = widgets(forgejo_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings(forgejo_api)) as stack:
        stack.link("alice", "forgejo", str(forgejo_api.user_id("alice")), "alice")
        payload = mention(forgejo_api, repo, "alice", "@resolver please fix add()")
        answer = post(ingress(stack, monkeypatch), delivery(payload, secret="not the secret"))
        assert answer.status_code == 401
        with session_scope() as session:
            assert session.scalars(select(Job.id)).all() == []
    assert said(forgejo_api) == [] and forgejo_api.pulls == []
