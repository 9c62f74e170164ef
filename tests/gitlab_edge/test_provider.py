"""The registered `gitlab` provider: triggers recorded from real payloads are answered where
they came from, with the bot's stored token (else the requester's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from integrations.gitlab.events import NoteEvent
from integrations.gitlab.provider import GitLabForge, conversation_for, forge_for
from integrations.gitlab.routes import on_note
from resolver import accounts, providers
from resolver.agent.task import Comment, ReviewThread
from resolver.callback_errors import PermanentCallbackError, TransientCallbackError
from resolver.config import Settings, get_settings
from resolver.db import session_scope
from resolver.providers import ForgeUser, History, PullInfo, hidden_tag
from resolver.triggers import Policy
from resolver.vault import Vault, store_credential
from tests.conftest import ResolverEnv
from tests.gitlab_edge.conftest import BOT, BOT_TOKEN
from tests.support.git_http import IDENTITY, GitHttpServer, create_bare_repo, run_git
from tests.support.gitlab_api import DEVELOPER, GitLabAPI, Project

FIXTURES = Path(__file__).parents[2] / "integrations" / "gitlab" / "fixtures"
# What the recorded payloads name: project 5, issue #17, merge request !1, user 1 (root).
PROJECT = "gitlab-org/gitlab-test"
THREAD = "6a9c1750b37d513a43987b574953fceb50b03ce7"
USER_TOKEN = "glpat-" + "Us3r" * 5


@pytest.fixture
def gitlab_env(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch, gitlab_api: GitLabAPI
) -> Iterator[Settings]:
    """The process settings (database, vault keys) pointed at the GitLab stand-in."""
    monkeypatch.setenv("RESOLVER_GITLAB_URL", gitlab_api.url)
    monkeypatch.setenv("RESOLVER_BOT_NAME", BOT)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def store_bot_token(settings: Settings, token: str) -> None:
    """What `resolver tokens set --provider gitlab --installation <gitlab_url>` stores."""
    with session_scope() as session:
        installation = accounts.ensure_installation(session, "gitlab", settings.gitlab_url)
        store_credential(
            session,
            Vault(settings.fernet_keys),
            provider="gitlab",
            kind="bot",
            secret=token,
            installation_id=installation.id,
        )


def store_user_token(settings: Settings, name: str, token: str) -> int:
    with session_scope() as session:
        user = accounts.add_user(session, name)
        store_credential(
            session,
            Vault(settings.fernet_keys),
            provider="gitlab",
            kind="pat",
            secret=token,
            user_id=user.id,
        )
        return user.id


@pytest.fixture
def recorded(gitlab_api: GitLabAPI, git_server: GitHttpServer) -> Project:
    """The project of the recorded payloads, with a real repository, issue #17 and MR !1."""
    bare = create_bare_repo(git_server.root, PROJECT)
    project = gitlab_api.add_project(PROJECT, git_server.url_for(PROJECT), id=5, bare=bare)
    root = gitlab_api.add_user("root", user_id=1)
    gitlab_api.add_member(project, root, DEVELOPER)
    gitlab_api.add_issue(project, 17, "Export fails")
    gitlab_api.add_merge_request(project, "feature", iid=1)
    return project


def trigger_of(fixture: str, text: str) -> dict[str, Any]:
    """The trigger context the route handler records for a real payload saying `text`, as
    it comes back from the job's JSON column."""
    payload = json.loads((FIXTURES / f"{fixture}.json").read_text())
    payload["object_attributes"]["note"] = text
    trigger = on_note(NoteEvent.model_validate(payload), Policy(BOT, BOT))
    assert trigger is not None
    context: dict[str, Any] = json.loads(json.dumps(trigger.context))
    return context


def test_the_provider_is_registered_at_import() -> None:
    registered = providers.provider("gitlab")
    assert (registered.conversation, registered.forge) == (conversation_for, forge_for)


def test_a_diff_note_is_answered_in_its_thread(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    position = {"new_path": "README.md", "new_line": 14}
    trigger = gitlab_api.add_note(
        recorded, "merge_requests", 1, "@resolver simpler please", "root",
        id=1246, type="DiffNote", discussion_id=THREAD, position=position,
    )  # fmt: skip
    context = trigger_of("Note_Hook__diff_note_on_merge_request", "@resolver simpler please")
    conversation = providers.conversation("gitlab", context, None)

    conversation.acknowledge()
    ref = conversation.post("Queued")
    conversation.edit(ref, "**Done**")

    [reply] = [n for n in gitlab_api.notes.values() if n.id != 1246]
    assert ref == {
        "kind": "merge_request",
        "iid": 1,
        "note_id": reply.id,
        "discussion_id": THREAD,
        "tag": None,
    }
    assert (reply.discussion_id, reply.type, reply.body) == (THREAD, "DiffNote", "**Done**")
    assert trigger.awards == [(gitlab_api.tokens[BOT_TOKEN], "eyes")]
    paths = [(r.method, r.path) for r in gitlab_api.requests]
    assert paths == [
        ("POST", "/projects/5/merge_requests/1/notes/1246/award_emoji"),
        ("POST", f"/projects/5/merge_requests/1/discussions/{THREAD}/notes"),
        ("PUT", f"/projects/5/merge_requests/1/discussions/{THREAD}/notes/{reply.id}"),
    ]


@pytest.mark.parametrize(
    ("fixture", "plural", "iid"),
    [("Note_Hook__on_issue", "issues", 17), ("Note_Hook__on_merge_request", "merge_requests", 1)],
)
def test_a_plain_note_is_answered_with_a_note(
    gitlab_env: Settings,
    gitlab_api: GitLabAPI,
    recorded: Project,
    fixture: str,
    plural: str,
    iid: int,
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    context = trigger_of(fixture, "@resolver please fix")
    note_id = int(context["note_id"])
    trigger = gitlab_api.add_note(recorded, plural, iid, "@resolver please fix", "root", id=note_id)
    conversation = providers.conversation("gitlab", context, None)

    conversation.acknowledge()
    ref = conversation.post("Queued")
    conversation.edit(ref, "Working")

    assert ref["discussion_id"] is None
    status = gitlab_api.notes[ref["note_id"]]
    assert (status.kind, status.iid, status.body, status.type) == (plural, iid, "Working", None)
    assert status.discussion_id != trigger.discussion_id
    assert trigger.awards == [(gitlab_api.tokens[BOT_TOKEN], "eyes")]
    assert gitlab_api.requests[-1].path == f"/projects/5/{plural}/{iid}/notes/{status.id}"


def test_a_label_trigger_has_nothing_to_acknowledge(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    context = {"repo": PROJECT, "project_id": 5, "noteable_type": "issue", "iid": 17}
    conversation = providers.conversation("gitlab", {**context, "label": "resolver"}, None)
    conversation.acknowledge()
    assert gitlab_api.requests == []
    ref = conversation.post("Queued")
    assert gitlab_api.notes[ref["note_id"]].body == "Queued"


def test_history_leaves_out_system_and_bot_notes(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    gitlab_api.add_note(recorded, "merge_requests", 1, "added 1 commit", "root", system=True)
    gitlab_api.add_note(recorded, "merge_requests", 1, "Please *also* fix `b`", "alice")
    gitlab_api.add_note(recorded, "merge_requests", 1, "Queued", BOT)
    position = {"old_path": "a.py", "new_path": "a.py", "old_line": None, "new_line": 3}
    diff = gitlab_api.add_note(
        recorded, "merge_requests", 1, "off by one", "bob", type="DiffNote", position=position
    )
    gitlab_api.add_note(
        recorded, "merge_requests", 1, "On it", BOT,
        type="DiffNote", position=position, discussion_id=diff.discussion_id,
    )  # fmt: skip
    gitlab_api.add_note(
        recorded, "merge_requests", 1, "Only the bot spoke here", BOT, type="DiffNote",
        position={"new_path": "b.py", "new_line": 1},
    )  # fmt: skip
    gitlab_api.add_note(recorded, "merge_requests", 1, "@resolver fix these", "alice")
    context = trigger_of("Note_Hook__on_merge_request", "@resolver fix these")

    history = providers.conversation("gitlab", context, None).history()

    assert history == History(
        comments=(
            Comment("alice", "Please *also* fix `b`"),
            Comment("alice", "@resolver fix these"),
        ),
        review_threads=(ReviewThread("a.py", 3, (Comment("bob", "off by one"),)),),
    )


def test_history_of_an_issue_has_no_diff_threads(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    gitlab_api.add_note(recorded, "issues", 17, "It fails on CSV", "alice")
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    history = providers.conversation("gitlab", context, None).history()
    assert history == History(comments=(Comment("alice", "It fails on CSV"),))
    assert [r.path for r in gitlab_api.requests] == ["/projects/5/issues/17/notes"]


def test_without_any_token_the_admin_is_told_what_to_run(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    conversation = providers.conversation("gitlab", context, None)
    with pytest.raises(PermanentCallbackError) as failed:
        conversation.post("Queued")
    assert f"--provider gitlab --installation {gitlab_api.url}" in str(failed.value)
    assert gitlab_api.requests == []


def test_without_a_bot_token_the_requesters_token_is_used(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    gitlab_api.add_token(USER_TOKEN, "root")
    requester = store_user_token(gitlab_env, "root", USER_TOKEN)
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    providers.conversation("gitlab", context, requester).post("Queued")
    assert gitlab_api.requests[0].headers["private-token"] == USER_TOKEN


def test_the_bot_token_comes_before_the_requesters(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    requester = store_user_token(gitlab_env, "root", USER_TOKEN)
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    providers.conversation("gitlab", context, requester).post("Queued")
    assert gitlab_api.requests[0].headers["private-token"] == BOT_TOKEN


def test_a_stored_token_gitlab_refuses_is_permanent(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    revoked = "glpat-revoked-" + "r" * 12
    store_bot_token(gitlab_env, revoked)
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    with pytest.raises(PermanentCallbackError) as failed:
        providers.conversation("gitlab", context, None).post("Queued")
    assert failed.value.status == 401
    assert revoked not in str(failed.value)


def test_the_forge_opens_one_draft_merge_request_from_a_pushed_branch(
    gitlab_env: Settings,
    gitlab_api: GitLabAPI,
    git_server: GitHttpServer,
    recorded: Project,
    tmp_path: Path,
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    context = trigger_of("Note_Hook__on_issue", "@resolver fix the export")
    forge = providers.forge("gitlab", context, None)
    assert isinstance(forge, GitLabForge)

    assert forge.can_write(PROJECT, ForgeUser("1", "root"))
    assert not forge.can_write(PROJECT, ForgeUser(str(gitlab_api.add_user("eve")), "eve"))
    repo = forge.repository(context["repo"])
    assert (repo.clone_url, repo.default_branch) == (recorded.clone_url, "main")
    env = forge.git_env(repo.clone_url)
    work = tmp_path / "work"
    run_git("clone", "--quiet", repo.clone_url, str(work), env=env)
    (work / "export.py").write_text("print('fixed')\n")
    run_git("add", "export.py", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Fix the export", cwd=work)
    run_git("push", "--quiet", "origin", "HEAD:refs/heads/resolver/17-export", cwd=work, env=env)

    assert forge.find_open_pull(PROJECT, "resolver/17-export") is None
    opened = forge.open_draft_pull(PROJECT, "resolver/17-export", "main", "Fix export", "#17")
    again = forge.open_draft_pull(PROJECT, "resolver/17-export", "main", "Fix export", "#17")

    assert opened == again == forge.get_pull(PROJECT, opened.number)
    assert opened == PullInfo(2, f"{gitlab_api.url}/{PROJECT}/-/merge_requests/2",
                              "resolver/17-export", "main", BOT)  # fmt: skip
    assert {u for u in (r.user for r in git_server.requests) if u} == {"oauth2"}
    assert BOT_TOKEN not in (work / ".git" / "config").read_text()


def test_a_user_linked_without_a_numeric_id_is_refused(
    gitlab_env: Settings, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    forge = providers.forge("gitlab", {"repo": PROJECT}, None)
    with pytest.raises(PermanentCallbackError, match="numeric id"):
        forge.can_write(PROJECT, ForgeUser("root", "root"))


def test_a_trigger_without_a_noteable_is_permanent(gitlab_env: Settings) -> None:
    with pytest.raises(PermanentCallbackError, match="noteable_type"):
        providers.conversation("gitlab", {"repo": PROJECT, "iid": 3}, None)
    with pytest.raises(PermanentCallbackError, match="cannot reply on a 'commit'"):
        providers.conversation("gitlab", {"repo": PROJECT, "noteable_type": "commit"}, None)


@pytest.mark.parametrize(
    ("fixture", "route"),
    [
        ("Note_Hook__on_issue", "POST /projects/{id}/issues/{iid}/notes"),
        (
            "Note_Hook__diff_note_on_merge_request",
            "POST /projects/{id}/merge_requests/{iid}/discussions/{discussion_id}/notes",
        ),
    ],
)
def test_a_note_whose_answer_was_lost_is_found_by_its_hidden_tag(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project, fixture: str, route: str
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    context = trigger_of(fixture, "@resolver please fix")
    plural = "issues" if context["noteable_type"] == "issue" else "merge_requests"
    gitlab_api.add_note(
        recorded, plural, int(context["iid"]), "@resolver please fix", "root",
        id=int(context["note_id"]), discussion_id=context.get("discussion_id") or "d0",
    )  # fmt: skip
    tagged = hidden_tag("status-12")
    gitlab_api.add_note(recorded, plural, int(context["iid"]), tagged, "root")
    conversation = providers.conversation("gitlab", context, None)
    since = datetime.now(UTC)
    assert conversation.find("status-12", since) is None  # root's note, not the bot's

    gitlab_api.fail(route, 502, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None
    for other in ("status-1", "status-120", "notice-12"):
        assert conversation.find(other, since) is None
    conversation.edit(ref, "Done")

    bot = gitlab_api.tokens[BOT_TOKEN]
    mine = [n for n in gitlab_api.notes.values() if n.author == bot]
    assert [(n.id, n.body) for n in mine] == [(ref["note_id"], f"Done\n{tagged}")]
    thread = THREAD if plural == "merge_requests" else None
    kind = context["noteable_type"]
    assert ref == {
        "kind": kind,
        "iid": context["iid"],
        "note_id": mine[0].id,
        "discussion_id": thread,
        "tag": "status-12",
    }
