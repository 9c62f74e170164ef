"""GitLab end to end: a mention in a thread of the bot's own merge request is one job that takes
every unresolved discussion, pushes once, replies in each, and resolves them only where the
repository's default branch allows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.gitlab.standin.api import DEVELOPER, GitLabAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.gitlab_flow import (
    BOT,
    PROJECT,
    diff_note_hook,
    gitlab_settings,
    store_bot_token,
)
from tests.e2e.stack import REPO_FILES, by_step, ingress, running_stack
from tests.integrations.deliveries import gitlab, post
from tests.support.llm_server import tool

pytestmark = pytest.mark.timeout(420)

BRANCH = "resolver/7-fix-add"
DOCSTRING = '    """Add two numbers."""\n'
ASKS = ("please document add()", "@resolver name the parameters better", "is this tested?")
POSITION = {
    "base_sha": "0" * 40,
    "start_sha": "0" * 40,
    "head_sha": "1" * 40,
    "old_path": "calc.py",
    "new_path": "calc.py",
    "position_type": "text",
    "old_line": None,
    "new_line": 2,
}
RESOLVING = "reviews:\n  resolve_threads: true\n"


@pytest.mark.parametrize("config", [None, RESOLVING], ids=["left-open", "resolved"])
def test_a_thread_mention_is_one_job_three_replies_one_push_and_resolves_only_when_allowed(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
    config: str | None,
) -> None:
    files = {**REPO_FILES, **({".resolver/config.yml": config} if config else {})}
    bare = create_bare_repo(gitlab_git.root, PROJECT, files)
    project = gitlab_api.add_project(PROJECT, gitlab_git.url_for(PROJECT), bare=bare)
    alice = gitlab_api.add_user("alice")
    gitlab_api.add_member(project, alice, DEVELOPER)
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    merge_request = gitlab_api.add_merge_request(
        project, BRANCH, "Fix add()", author=gitlab_api.add_user(BOT)
    )
    iid = merge_request.iid
    notes = [
        gitlab_api.add_note(
            project, "merge_requests", iid, ask, "alice", type="DiffNote", position=POSITION
        )
        for ask in ASKS
    ]
    done = gitlab_api.add_note(
        project, "merge_requests", iid, "typo?", "alice", type="DiffNote", position=POSITION,
        resolved=True,
    )  # fmt: skip
    threads = [note.discussion_id for note in notes]
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        stack.link("alice", "gitlab", str(alice), "alice")
        store_bot_token(gitlab_api)
        stack.llm.set_script(
            by_step(
                [
                    tool(
                        "str_replace_editor",
                        command="str_replace",
                        path="calc.py",
                        old_str="def add(a, b):\n",
                        new_str="def add(a, b):\n" + DOCSTRING,
                    ),
                    tool(
                        "finish",
                        outcome="changed_code",
                        summary="Documented add().",
                        threads={threads[0]: "Added a docstring.", threads[2]: ""},
                    ),
                ]
            )
        )
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        payload = diff_note_hook(gitlab_api, project, merge_request, notes[1], "alice")
        answer = post(client, gitlab("Note Hook", payload))
        assert answer.status_code == 202, answer.text
        job_id = int(answer.json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled()
        job = stack.job(job_id)
        with session_scope() as session:
            jobs = session.scalars(select(Job.id)).all()

    assert job.outcome == "changed_code", job.error
    assert job.branch == BRANCH and len(jobs) == 1 and len(gitlab_api.merge_requests) == 1
    head = run_git("--git-dir", str(bare), "rev-parse", BRANCH).strip()
    commits = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{BRANCH}")
    assert len(commits.splitlines()) == 1  # one push
    bot = gitlab_api.add_user(BOT)
    replies = {
        n.discussion_id: n.body
        for n in gitlab_api.notes.values()
        if n.author == bot and n.discussion_id in threads
    }
    bot_in_threads = [
        n for n in gitlab_api.notes.values() if n.author == bot and n.type == "DiffNote"
    ]
    assert set(replies) == set(threads) and len(bot_in_threads) == 3
    assert replies[threads[0]].startswith("Added a docstring.") and head in replies[threads[0]]
    assert replies[threads[1]].startswith(f"Addressed in {head}.")
    assert replies[threads[2]].startswith(f"Addressed in {head}.")
    assert not any(n.discussion_id == done.discussion_id for n in bot_in_threads)
    prompt = str(stack.llm.requests[-1]["messages"])
    assert all(ask in prompt for ask in ASKS) and "typo?" not in prompt

    if config is None:
        assert gitlab_api.resolutions == [] and not any(n.resolved for n in notes)
    else:
        assert sorted(d for d, _, _ in gitlab_api.resolutions) == sorted(threads)
        assert all(resolved and user == bot for _, resolved, user in gitlab_api.resolutions)
        assert all(n.resolved for n in notes)
