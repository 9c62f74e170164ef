"""The registered `gitlab` provider: triggers recorded from real payloads are answered where
they came from, with the bot's stored token (else the requester's)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest

from integrations import registry
from integrations.gitlab.provider import GitLabForge
from integrations.gitlab.standin.api import GitLabAPI, Project
from integrations.gitlab.tokens import JobToken
from integrations.standin.git_http import IDENTITY, GitHttpServer, run_git
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import (
    Comment,
    ForgeUser,
    History,
    PullInfo,
    ReviewThread,
    hidden_tag,
)
from resolver.contract.triggers import comment_of, read_trigger
from resolver.core import logs
from resolver.core.settings import Settings, get_settings
from tests.integrations.gitlab.conftest import (
    BOT,
    BOT_TOKEN,
    RECORDED_PROJECT,
    THREAD,
    USER_TOKEN,
    store_bot_token,
    store_user_token,
    trigger_of,
)


def test_gitlab_is_installed_as_a_forge_whose_factories_build_its_own_objects() -> None:
    installed = registry.get("gitlab")
    assert installed.is_forge and installed.pull_word == "merge request"
    assert repr(installed.conversation) == first_call("conversation_for")
    assert repr(installed.forge) == first_call("forge_for")


def first_call(function: str) -> str:
    return f"<integrations.gitlab.provider:{function}, imported on first call>"


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
    conversation = registry.conversation("gitlab", read_trigger(context), None, get_settings())

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
    note_id = comment_of(read_trigger(context))
    trigger = gitlab_api.add_note(recorded, plural, iid, "@resolver please fix", "root", id=note_id)
    conversation = registry.conversation("gitlab", read_trigger(context), None, get_settings())

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
    context = {"repo": RECORDED_PROJECT, "project_id": 5, "noteable_type": "issue", "iid": 17}
    conversation = registry.conversation(
        "gitlab", read_trigger({**context, "label": "resolver"}), None, get_settings()
    )
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

    history = registry.conversation("gitlab", read_trigger(context), None, get_settings()).history()

    assert history == History(
        comments=(
            Comment("alice", "Please *also* fix `b`"),
            Comment("alice", "@resolver fix these"),
        ),
        review_threads=(
            ReviewThread(
                "a.py",
                3,
                (Comment("bob", "off by one"),),
                id=diff.discussion_id,
                answered=True,  # the bot spoke last
                where=(("discussion_id", diff.discussion_id), ("note_type", "DiffNote")),
            ),
        ),
    )


def test_a_discussion_is_a_thread_once_and_is_resolved_through_the_registry(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    started = gitlab_api.add_note(
        recorded, "merge_requests", 1, "rename the module?", "alice", type="DiscussionNote"
    )
    context = trigger_of("Note_Hook__on_merge_request", "@resolver fix these")
    history = registry.conversation("gitlab", read_trigger(context), None, get_settings()).history()
    where = (("discussion_id", started.discussion_id), ("note_type", "DiscussionNote"))
    assert history == History(
        comments=(),  # not again as a plain comment
        review_threads=(
            ReviewThread(
                None,
                None,
                (Comment("alice", "rename the module?"),),
                id=started.discussion_id,
                where=where,
            ),
        ),
    )

    resolve = registry.get("gitlab").resolve_thread
    assert resolve is not None
    resolve(read_trigger(context), None, dict(where), get_settings())
    assert started.resolved
    put = gitlab_api.requests[-1]
    assert (put.method, put.path) == (
        "PUT",
        f"/projects/5/merge_requests/1/discussions/{started.discussion_id}",
    )
    with pytest.raises(PermanentCallbackError):
        resolve(
            read_trigger(trigger_of("Note_Hook__on_issue", "@resolver fix")),
            None,
            dict(where),
            get_settings(),
        )


def test_history_leaves_out_notes_posted_with_the_requesters_token(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    gitlab_api.add_token(USER_TOKEN, "root")
    requester = store_user_token(gitlab_env, "root", USER_TOKEN)
    position = {"new_path": "README.md", "new_line": 14}
    gitlab_api.add_note(
        recorded, "merge_requests", 1, "@resolver simpler please", "root",
        id=1246, type="DiffNote", discussion_id=THREAD, position=position,
    )  # fmt: skip
    gitlab_api.add_note(recorded, "merge_requests", 1, "Please *also* fix `b`", "root")
    status = f"Queued\n{hidden_tag('status-13')}"
    gitlab_api.add_note(recorded, "merge_requests", 1, status, "root")
    context = trigger_of("Note_Hook__diff_note_on_merge_request", "@resolver simpler please")
    conversation = registry.conversation("gitlab", read_trigger(context), requester, get_settings())
    conversation.post("On it", tag="status-12")  # into the diff thread, as root

    history = conversation.history()

    assert history == History(
        comments=(Comment("root", "Please *also* fix `b`"),),
        review_threads=(
            ReviewThread(
                "README.md",
                14,
                (Comment("root", "@resolver simpler please"),),
                id=THREAD,
                answered=True,  # "On it", posted with root's token, is the bot's
                where=(("discussion_id", THREAD), ("note_type", "DiffNote")),
            ),
        ),
    )


def test_history_of_an_issue_has_no_diff_threads(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    gitlab_api.add_note(recorded, "issues", 17, "It fails on CSV", "alice")
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    history = registry.conversation("gitlab", read_trigger(context), None, get_settings()).history()
    assert history == History(comments=(Comment("alice", "It fails on CSV"),))
    assert [r.path for r in gitlab_api.requests] == ["/projects/5/issues/17/notes"]


def test_without_any_token_the_admin_is_told_what_to_run(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    conversation = registry.conversation("gitlab", read_trigger(context), None, get_settings())
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
    registry.conversation("gitlab", read_trigger(context), requester, get_settings()).post("Queued")
    assert gitlab_api.requests[0].headers["private-token"] == USER_TOKEN


def test_the_bot_token_comes_before_the_requesters(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    requester = store_user_token(gitlab_env, "root", USER_TOKEN)
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    registry.conversation("gitlab", read_trigger(context), requester, get_settings()).post("Queued")
    assert gitlab_api.requests[0].headers["private-token"] == BOT_TOKEN


def test_the_token_a_job_acts_with_is_masked_among_the_most_recent_not_for_good(
    gitlab_env: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's token, asked before every call: masked for good, the mask grew with each
    one and each rebuilt all of it."""
    monkeypatch.setattr(logs, "_known", set())
    monkeypatch.setattr(logs, "_passing", OrderedDict())
    monkeypatch.setattr(logs, "_redactor", logs.Redactor())
    requester = store_user_token(gitlab_env, "root", USER_TOKEN)
    assert JobToken(requester, get_settings())() == USER_TOKEN
    assert logs._known == set()
    assert next(reversed(logs._passing)) == USER_TOKEN
    assert logs.redact(f"token {USER_TOKEN}") == "token ******"


def test_a_stored_token_gitlab_refuses_is_permanent(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    revoked = "glpat-revoked-" + "r" * 12
    store_bot_token(gitlab_env, revoked)
    context = trigger_of("Note_Hook__on_issue", "@resolver fix")
    with pytest.raises(PermanentCallbackError) as failed:
        registry.conversation("gitlab", read_trigger(context), None, get_settings()).post("Queued")
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
    forge = registry.forge("gitlab", read_trigger(context), None, get_settings())
    assert isinstance(forge, GitLabForge)

    assert forge.can_write(RECORDED_PROJECT, ForgeUser("1", "root"))
    assert not forge.can_write(RECORDED_PROJECT, ForgeUser(str(gitlab_api.add_user("eve")), "eve"))
    repo = forge.repository(RECORDED_PROJECT)
    assert (repo.clone_url, repo.default_branch) == (recorded.clone_url, "main")
    env = forge.git_env(repo.clone_url)
    work = tmp_path / "work"
    run_git("clone", "--quiet", repo.clone_url, str(work), env=env)
    (work / "export.py").write_text("print('fixed')\n")
    run_git("add", "export.py", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Fix the export", cwd=work)
    run_git("push", "--quiet", "origin", "HEAD:refs/heads/resolver/17-export", cwd=work, env=env)

    assert forge.find_open_pull(RECORDED_PROJECT, "resolver/17-export") is None
    opened = forge.open_draft_pull(
        RECORDED_PROJECT, "resolver/17-export", "main", "Fix export", "#17"
    )
    again = forge.open_draft_pull(
        RECORDED_PROJECT, "resolver/17-export", "main", "Fix export", "#17"
    )

    assert opened == again == forge.get_pull(RECORDED_PROJECT, opened.number)
    assert opened == PullInfo(2, f"{gitlab_api.url}/{RECORDED_PROJECT}/-/merge_requests/2",
                              "resolver/17-export", "main", BOT)  # fmt: skip
    assert {u for u in (r.user for r in git_server.requests) if u} == {"oauth2"}
    assert BOT_TOKEN not in (work / ".git" / "config").read_text()


def test_a_user_linked_without_a_numeric_id_is_refused(
    gitlab_env: Settings, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    forge = registry.forge("gitlab", read_trigger({"repo": RECORDED_PROJECT}), None, get_settings())
    with pytest.raises(PermanentCallbackError, match="numeric id"):
        forge.can_write(RECORDED_PROJECT, ForgeUser("root", "root"))


def test_a_trigger_without_a_noteable_is_permanent(gitlab_env: Settings) -> None:
    push = {"repo": RECORDED_PROJECT, "base_push": {"branch": "main", "sha": "a" * 40}}
    with pytest.raises(PermanentCallbackError, match="names no issue or merge request"):
        registry.conversation("gitlab", read_trigger(push), None, get_settings())
    with pytest.raises(PermanentCallbackError, match="names no project"):
        registry.conversation(
            "gitlab", read_trigger({"noteable_type": "commit"}), None, get_settings()
        )
