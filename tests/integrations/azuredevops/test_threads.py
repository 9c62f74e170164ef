"""A pull request's threads as a conversation, against the stand-in: each thread with a
person's comment is a review thread (its file and line, resolved unless active or pending,
answered when the bot wrote last), a message moved into one is a reply there, one is resolved
as `fixed`, and only the bot's own tagged comments are its own: a pasted tag is not."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from cryptography.fernet import Fernet

from integrations.azuredevops.provider import conversation, resolve_thread
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.conformance import answer_problems, request_problems
from integrations.azuredevops.standin.state import Pull, Repo
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import hidden_tag
from resolver.contract.triggers import Repository, ReviewBatch, in_thread
from resolver.core.settings import Settings, get_settings
from tests.integrations.azuredevops.conftest import BOT_TOKEN, REPO

LINE = {
    "filePath": "/calc.py",
    "rightFileStart": {"line": 2, "offset": 1},
    "rightFileEnd": {"line": 2, "offset": 1},
}


@pytest.fixture
def settings(azure_api: AzureDevOpsAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    from tests.conftest import reset_caches

    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_URL", azure_api.url)
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_IDENTITY_URL", azure_api.url)
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    reset_caches()
    yield get_settings()
    reset_caches()


@pytest.fixture
def pull(azure_api: AzureDevOpsAPI, repo: Repo) -> Pull:
    bot = azure_api.add_person("resolver@contoso.com")
    return azure_api.add_pull(repo, "resolver/7-fix-add", bot)


def batch(pull: Pull) -> ReviewBatch:
    return ReviewBatch(repo=Repository(full_name=REPO), number=pull.id, part={"thread_id": None})


def test_the_threads_of_a_pull_request_are_its_review_threads(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    alice = azure_api.add_person("alice@contoso.com")
    bot = azure_api.add_person("resolver@contoso.com")
    on_line = azure_api.add_thread(pull, alice, "@resolver document add()", context=LINE)
    general = azure_api.add_thread(pull, alice, "@resolver is this tested?")
    fixed = azure_api.add_thread(pull, alice, "typo?")
    fixed.status = "fixed"
    answered = azure_api.add_thread(pull, alice, "rename it")
    azure_api.add_reply(answered, bot, f"Renamed.\n{hidden_tag('thread-3')}")
    pasted = azure_api.add_thread(pull, alice, f"done?\n{hidden_tag('thread-4')}")
    azure_api.add_thread(pull, bot, f"Working on it\n{hidden_tag('status-1')}")

    found = conversation(batch(pull), None, settings).history()

    threads = {t.id: t for t in found.review_threads}
    assert set(threads) == {str(t.id) for t in (on_line, general, fixed, answered, pasted)}
    line = threads[str(on_line.id)]
    assert (line.path, line.line, line.resolved, line.answered) == ("calc.py", 2, False, False)
    assert [c.body for c in line.comments] == ["@resolver document add()"]
    assert line.where == (("reply_thread", on_line.id),)
    assert (threads[str(general.id)].path, threads[str(general.id)].line) == (None, None)
    assert threads[str(fixed.id)].resolved
    assert threads[str(answered.id)].answered
    assert [c.body for c in threads[str(answered.id)].comments] == ["rename it"]
    assert not threads[str(pasted.id)].answered  # alice wrote the tag: not the bot's answer


def test_a_reply_moved_into_a_review_thread_is_posted_there_and_found_again(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    alice = azure_api.add_person("alice@contoso.com")
    bot = azure_api.add_person("resolver@contoso.com")
    thread = azure_api.add_thread(pull, alice, "@resolver document add()", context=LINE)
    [review] = conversation(batch(pull), None, settings).history().review_threads
    into = conversation(in_thread(batch(pull), dict(review.where)), None, settings)

    ref = into.post("Added a docstring.", tag="thread-9")

    assert len(pull.threads) == 1 and len(thread.comments) == 2
    reply = thread.comments[-1]
    assert (reply.author, reply.content) == (
        bot.id,
        f"Added a docstring.\n{hidden_tag('thread-9')}",
    )
    assert ref == {"kind": "thread", "thread": thread.id, "id": reply.id, "tag": "thread-9"}
    assert into.find("thread-9", datetime(2020, 1, 1, tzinfo=UTC)) == ref


def test_a_pasted_status_tag_is_not_the_bots_message(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    alice = azure_api.add_person("alice@contoso.com")
    azure_api.add_thread(pull, alice, f"ok\n{hidden_tag('status-7')}")
    assert conversation(batch(pull), None, settings).find("status-7", datetime.now(UTC)) is None


def test_a_review_thread_is_resolved_as_fixed(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    alice = azure_api.add_person("alice@contoso.com")
    bot = azure_api.add_person("resolver@contoso.com")
    thread = azure_api.add_thread(pull, alice, "@resolver document add()", context=LINE)

    resolve_thread(batch(pull), None, {"reply_thread": thread.id}, settings)

    assert thread.status == "fixed" and azure_api.statuses == [(thread.id, "fixed", bot.id)]
    [found] = conversation(batch(pull), None, settings).history().review_threads
    assert found.resolved
    sent = [
        p for r in azure_api.requests for p in request_problems(r.method, r.path, r.query, r.body)
    ]
    answered = [p for a in azure_api.answers for p in answer_problems(a.method, a.path, a.body)]
    assert sent == [] and answered == []
    with pytest.raises(PermanentCallbackError):
        resolve_thread(batch(pull), None, {}, settings)
