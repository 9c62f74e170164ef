"""Forgejo as a conversation and as a forge, against the stand-in and a real git server: what
a user sees on the issue, and what git can do with the job's token."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from integrations.forgejo.client import ForgejoClient
from integrations.forgejo.provider import (
    ForgejoConversation,
    conversation_for,
    forge_for,
    git_auth_env,
)
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Repo
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import ForgeUser, hidden_tag
from tests.integrations.forgejo.conftest import BOT, BOT_TOKEN, REPO

EARLIER = datetime.now(UTC) - timedelta(hours=1)


def conversation(client: ForgejoClient, comment_id: int | None = None) -> ForgejoConversation:
    return ForgejoConversation(client, REPO, 7, bot_name=BOT, comment_id=comment_id)


def test_a_tagged_status_is_posted_found_and_edited_with_its_tag(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    talk = conversation_for(client, REPO, 7, bot_name=BOT, comment_id=None, is_pull=False)
    ref = talk.post("Queued", tag="status-12")
    assert talk.find("status-12", EARLIER) == ref
    assert talk.find("status-13", EARLIER) is None
    talk.edit(ref, "Done")
    body = forgejo_api.comments[ref["id"]].body
    assert body == f"Done\n{hidden_tag('status-12')}"


def test_a_tag_on_someone_elses_comment_is_not_ours(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    forgejo_api.add_comment(repo, 7, f"Copied\n{hidden_tag('status-12')}", "alice")
    assert conversation(client).find("status-12", EARLIER) is None


def test_with_a_persons_token_their_tagged_comment_is_ours(
    forgejo_api: ForgejoAPI, repo: Repo
) -> None:
    forgejo_api.add_token("alice-token", "alice")
    talk = conversation(ForgejoClient(forgejo_api.url, lambda: "alice-token"))
    ref = talk.post("Queued", tag="status-3")
    assert talk.find("status-3", EARLIER) == ref
    forgejo_api.add_comment(repo, 7, "What about None?", "bob")
    assert [c.body for c in talk.history().comments] == ["What about None?"]


def test_acknowledging_reacts_to_the_comment_that_asked(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    asked = forgejo_api.add_comment(repo, 7, "@resolver go", "alice")
    conversation(client).acknowledge()  # a label asked: nothing to react to
    assert forgejo_api.reactions == []
    conversation(client, asked.id).acknowledge()
    assert [(r.content, r.comment_id) for r in forgejo_api.reactions] == [("eyes", asked.id)]


def test_the_history_leaves_out_the_bots_own_comments(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    forgejo_api.add_comment(repo, 7, "@resolver go", "Alice")
    conversation(client).post("Working on it", tag="status-1")
    forgejo_api.add_comment(repo, 7, "Also the docs", "bob")
    found = [(c.author, c.body) for c in conversation(client).history().comments]
    assert found == [("Alice", "@resolver go"), ("bob", "Also the docs")]


def test_the_forge_checks_permission_by_login(client: ForgejoClient, repo: Repo) -> None:
    forge = forge_for(client, lambda: BOT_TOKEN)
    assert forge.can_write(REPO, ForgeUser("2", "alice")) is True
    assert forge.can_write(REPO, ForgeUser("4", "bob")) is False
    with pytest.raises(PermanentCallbackError):
        forge.can_write(REPO, ForgeUser("9"))
    pull = forge.open_draft_pull(REPO, "resolver/7-go", "main", "Go", "Fixes #7")
    assert forge.find_open_pull(REPO, "resolver/7-go") == pull == forge.get_pull(REPO, pull.number)
    assert forge.repository(REPO).default_branch == "main"


@pytest.fixture
def git_server(tmp_path: Path, forgejo_api: ForgejoAPI) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP that accept the tokens the Forgejo stand-in knows."""
    with GitHttpServer(tmp_path / "git", accepts=forgejo_api.tokens.__contains__) as server:
        create_bare_repo(server.root, REPO)
        yield server


def test_git_clones_and_pushes_with_the_jobs_token_only(
    git_server: GitHttpServer, client: ForgejoClient, tmp_path: Path
) -> None:
    url = git_server.url_for(REPO)
    env = forge_for(client, lambda: BOT_TOKEN).git_env(url)
    assert BOT_TOKEN not in str(env)  # only its Basic form, registered as a secret
    run_git("clone", "--quiet", url, str(tmp_path / "work"), env=env)
    work = tmp_path / "work"
    run_git("checkout", "--quiet", "-b", "resolver/7-go", cwd=work)
    run_git("push", "--quiet", "origin", "resolver/7-go", cwd=work, env=env)
    with pytest.raises(subprocess.CalledProcessError):
        run_git("clone", "--quiet", url, str(tmp_path / "anonymous"))
    other = git_auth_env(git_server.url_for("forgejo/other"), BOT_TOKEN)
    assert other["GIT_CONFIG_KEY_0"].endswith("/forgejo/other.git.extraHeader")


def test_a_token_is_never_sent_over_anything_but_http() -> None:
    with pytest.raises(PermanentCallbackError) as refused:
        git_auth_env("ssh://git@forgejo.example/forgejo/widgets.git", BOT_TOKEN)
    assert BOT_TOKEN not in str(refused.value)


def test_a_pull_requests_history_has_its_review_threads_by_file_and_line(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    pull = forgejo_api.add_pull(repo, "resolver/7-go", author=BOT)
    review = forgejo_api.add_review(
        pull, "alice", [("widget.py", 3, "Rename `w`"), ("widget.py", -2, "Why was this removed?")]
    )
    forgejo_api.add_reply(review, BOT, "widget.py", 3, "Renamed.")
    later = forgejo_api.add_review(pull, "alice", [("docs.md", 1, "Typo")])
    later.comments[0].resolver_id = forgejo_api.add_user("alice")
    talk = ForgejoConversation(client, REPO, pull.number, bot_name=BOT, is_pull=True)

    threads = {(t.path, t.line): t for t in talk.history().review_threads}

    assert set(threads) == {("widget.py", 3), ("widget.py", 2), ("docs.md", 1)}
    renamed = threads[("widget.py", 3)]
    assert [c.body for c in renamed.comments] == ["Rename `w`"]
    assert renamed.answered and not renamed.resolved
    assert not threads[("widget.py", 2)].answered
    assert threads[("docs.md", 1)].resolved
    issue_only = ForgejoConversation(client, REPO, pull.number, bot_name=BOT)
    assert issue_only.history().review_threads == ()
