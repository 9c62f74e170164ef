"""Bitbucket as a conversation and as a forge, against the stand-in and a real git server: what
a user sees on the pull request, and what git can do with the job's token."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from integrations.bitbucket.client import BitbucketClient
from integrations.bitbucket.provider import (
    BitbucketForge,
    conversation,
    conversation_for,
    forge,
    forge_for,
    git_auth_env,
    hidden_tag,
)
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Pull
from integrations.bitbucket.trigger import UNKNOWN_PULL
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import ForgeUser
from resolver.contract.triggers import (
    CiFailure,
    FailedCheck,
    PullRequest,
    Repository,
    ScheduleRun,
)
from resolver.core.settings import Settings, get_settings
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO

EARLIER = datetime.now(UTC) - timedelta(hours=1)


def test_a_tagged_status_is_posted_found_and_edited_with_its_tag(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    talk = conversation_for(client, REPO, pull.id)
    ref = talk.post("Queued", tag="status-12")
    assert talk.find("status-12", EARLIER) == ref
    assert talk.find("status-13", EARLIER) is None
    assert talk.find("status-12", datetime.now(UTC) + timedelta(minutes=5)) is None
    talk.edit(ref, "Done")
    assert bitbucket_api.comments[int(str(ref["id"]))].raw == f"Done\n\n{hidden_tag('status-12')}"


def test_a_tag_on_someone_elses_comment_is_not_ours(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    bitbucket_api.add_comment(pull, f"Copied\n\n{hidden_tag('status-12')}", "alice")
    assert conversation_for(client, REPO, pull.id).find("status-12", EARLIER) is None


def test_acknowledging_changes_nothing_bitbucket_has_no_reactions(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    conversation_for(client, REPO, pull.id).acknowledge()
    assert bitbucket_api.requests == [] and bitbucket_api.comments == {}


def test_the_history_leaves_out_the_bots_own_and_threads_the_line_comments(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    talk = conversation_for(client, REPO, pull.id)
    bitbucket_api.add_comment(pull, "@resolver go", "alice")
    talk.post("Working on it", tag="status-1")
    root = bitbucket_api.add_comment(pull, "Rename `w`", "alice", path="core.py", line=3)
    bitbucket_api.add_comment(pull, "Renamed.", "resolver", path="core.py", line=3, parent=root.id)
    other = bitbucket_api.add_comment(pull, "Why?", "bob", path="core.py", line=9)
    history = talk.history()
    assert [(c.author, c.body) for c in history.comments] == [("alice", "@resolver go")]
    threads = {t.id: t for t in history.review_threads}
    assert set(threads) == {str(root.id), str(other.id)}
    renamed = threads[str(root.id)]
    assert (renamed.path, renamed.line, renamed.answered) == ("core.py", 3, True)
    assert [c.body for c in renamed.comments] == ["Rename `w`"]
    assert not threads[str(other.id)].answered


def test_the_forge_checks_permission_by_uuid_and_opens_drafts(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    forge = forge_for(client, lambda: BOT_TOKEN)
    assert forge.can_write(REPO, ForgeUser(bitbucket_api.add_user("alice"), "alice")) is True
    assert forge.can_write(REPO, ForgeUser(bitbucket_api.add_user("bob"), "bob")) is False
    made = forge.open_draft_pull(REPO, "resolver/1-go", "main", "Go", "Fixes")
    assert forge.find_open_pull(REPO, "resolver/1-go") == made == forge.get_pull(REPO, made.number)
    forge.edit_pull_body(REPO, made.number, "Verified")
    assert bitbucket_api.pulls[-1].description == "Verified"
    assert forge.repository(REPO).default_branch == "main"


def test_a_data_center_trigger_is_refused_with_a_clear_error() -> None:
    trigger = PullRequest(
        repo=Repository(full_name="WID/widgets"), number=9, reach={"product": "datacenter"}
    )
    settings = Settings(_env_file=None, secret_keys=Fernet.generate_key().decode())  # type: ignore[call-arg]
    with pytest.raises(PermanentCallbackError, match="Data Center"):
        conversation(trigger, None, settings)


@pytest.fixture
def git_server(tmp_path: Path, bitbucket_api: BitbucketAPI) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP that accept the tokens the stand-in knows."""
    with GitHttpServer(tmp_path / "git", accepts=bitbucket_api.tokens.__contains__) as server:
        create_bare_repo(server.root, REPO)
        yield server


def test_git_clones_and_pushes_with_the_jobs_token_only(
    git_server: GitHttpServer, client: BitbucketClient, tmp_path: Path
) -> None:
    url = git_server.url_for(REPO)
    env = forge_for(client, lambda: BOT_TOKEN).git_env(url)
    assert BOT_TOKEN not in str(env)
    run_git("clone", "--quiet", url, str(tmp_path / "work"), env=env)
    work = tmp_path / "work"
    run_git("checkout", "--quiet", "-b", "resolver/1-go", cwd=work)
    run_git("push", "--quiet", "origin", "resolver/1-go", cwd=work, env=env)
    with pytest.raises(subprocess.CalledProcessError):
        run_git("clone", "--quiet", url, str(tmp_path / "anonymous"))


def test_a_token_is_never_sent_over_anything_but_http() -> None:
    with pytest.raises(PermanentCallbackError) as refused:
        git_auth_env("ssh://git@bitbucket.org/acme/widgets.git", BOT_TOKEN)
    assert BOT_TOKEN not in str(refused.value)


def test_a_red_checks_pull_request_is_the_bots_open_one_from_its_branch(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    ours = bitbucket_api.add_pull(
        bitbucket_api.repos[REPO], "resolver/1-go", "Go", author="resolver"
    )
    forge = BitbucketForge(client, lambda: BOT_TOKEN, from_branch="resolver/1-go")
    assert forge.get_pull(REPO, UNKNOWN_PULL).number == ours.id
    assert forge.get_pull(REPO, pull.id).number == pull.id
    gone = BitbucketForge(client, lambda: BOT_TOKEN, from_branch="resolver/9-gone")
    with pytest.raises(PermanentCallbackError, match="no open pull request"):
        gone.get_pull(REPO, UNKNOWN_PULL)


def test_a_red_checks_conversation_is_on_the_bots_pull_request(
    bitbucket_api: BitbucketAPI, pull: Pull, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import reset_caches

    ours = bitbucket_api.add_pull(
        bitbucket_api.repos[REPO], "resolver/1-go", "Go", author="resolver"
    )
    monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", bitbucket_api.api_url)
    monkeypatch.setenv("RESOLVER_BITBUCKET_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    reset_caches()
    check = FailedCheck(name="build", head_sha="abc", branch="resolver/1-go", conclusion="failed")
    trigger = CiFailure(
        repo=Repository(full_name=REPO), number=UNKNOWN_PULL, head_ref="resolver/1-go", check=check
    )
    try:
        conversation(trigger, None, get_settings()).post("Fixing the build")
    finally:
        reset_caches()
    [posted] = bitbucket_api.comments.values()
    assert (posted.number, posted.raw) == (ours.id, "Fixing the build")


def test_a_parent_chain_that_loops_still_ends_in_threads(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    first = bitbucket_api.add_comment(pull, "A", "alice", path="core.py", line=1)
    second = bitbucket_api.add_comment(pull, "B", "bob", path="core.py", line=1, parent=first.id)
    first.parent = second.id  # a loop Bitbucket should never send
    threads = conversation_for(client, REPO, pull.id).history().review_threads
    assert sorted(c.body for t in threads for c in t.comments) == ["A", "B"]


def test_a_schedule_run_acts_on_the_repository_through_the_forge(
    bitbucket_api: BitbucketAPI, pull: Pull, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import reset_caches

    monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", bitbucket_api.api_url)
    monkeypatch.setenv("RESOLVER_BITBUCKET_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    reset_caches()
    run = ScheduleRun(schedule="weekly-deps", forge_name="bitbucket", repo=REPO, run_id=1)
    try:
        made = forge(run, None, get_settings()).open_draft_pull(
            REPO, "resolver/weekly-deps", "main", "Deps", ""
        )
    finally:
        reset_caches()
    assert bitbucket_api.pulls[-1].draft and made.head == "resolver/weekly-deps"
