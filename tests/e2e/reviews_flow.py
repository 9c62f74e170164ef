"""The review side of the end-to-end tests, on each forge: threads on the bot's pull (request),
the deliveries of a review, and what the stand-in recorded of the bot's replies and resolves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pytest

from integrations.github.standin.api import BOT_LOGIN
from tests.e2e.forges import Forge, GitHubForge, GitLabForge
from tests.e2e.github_flow import review_comment_created, review_submitted
from tests.e2e.gitlab_flow import BOT, diff_note_hook
from tests.e2e.stack import Stack, ingress
from tests.integrations.deliveries import github, gitlab, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import Reply, tool

BRANCH = "resolver/7-fix-add"
DOCSTRING = '    """Add two numbers."""\n'
ASKS = ("please document add()", "@resolver name the parameters better", "is this tested?")
DONE = "typo?"  # a thread a person resolved already
RESOLVING = "reviews:\n  resolve_threads: true\n"
HUNK = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b"
REVIEW_ID = 880001
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


class Threads(Protocol):
    """The forge's review threads on a pull: opened by alice, asked about, replied in, resolved.
    A thread is named as the model is told to name it."""

    def open(self, number: int, text: str, *, resolved: bool = False) -> str: ...

    def ask(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, mentioned: str
    ) -> int:
        """The review's deliveries, the mention in thread `mentioned` among them; the one job
        they made, once it and its callbacks ended."""
        ...

    def bot_replies(self) -> list[tuple[str, str]]:
        """Each reply of the bot in a thread: the thread and what it said."""
        ...

    def resolved_by_bot(self) -> list[str]:
        """The threads the bot asked the forge to resolve (each try)."""
        ...


@dataclass
class GitHubThreads:
    forge: GitHubForge

    def open(self, number: int, text: str, *, resolved: bool = False) -> str:
        api = self.forge.api
        thread = api.add_review_comment(REPO, number, text, "alice", "calc.py", 2, HUNK, REVIEW_ID)
        if resolved:
            api.graphql.resolved[thread] = "alice"
        return str(thread)

    def ask(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, mentioned: str
    ) -> int:
        """alice submits her review, and GitHub sends the mention in one of its comments too."""
        client, git = ingress(stack, monkeypatch), self.forge.git
        review = review_submitted(git, number=number, head=BRANCH, review_id=REVIEW_ID)
        answers = [post(client, github("pull_request_review.submitted", review))]
        comment = review_comment_created(self.forge.api, git, int(mentioned), head=BRANCH)
        answers.append(post(client, github("pull_request_review_comment.created", comment)))
        [job_id] = {int(answer.json()["job_id"]) for answer in answers}
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled()
        return job_id

    def bot_replies(self) -> list[tuple[str, str]]:
        comments = self.forge.api.review_comments.values()
        return [(str(c.in_reply_to), c.body) for c in comments if c.login == BOT_LOGIN]

    def resolved_by_bot(self) -> list[str]:
        graphql = self.forge.api.graphql
        tried = [t.removeprefix("PRRT_") for t, who in graphql.resolutions if who == BOT_LOGIN]
        assert {str(t) for t, who in graphql.resolved.items() if who == BOT_LOGIN} == set(tried)
        return tried


@dataclass
class GitLabThreads:
    forge: GitLabForge

    def open(self, number: int, text: str, *, resolved: bool = False) -> str:
        note = self.forge.api.add_note(
            self.forge.project, "merge_requests", number, text, "alice",
            type="DiffNote", position=POSITION, resolved=resolved,
        )  # fmt: skip
        return note.discussion_id

    def ask(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, mentioned: str
    ) -> int:
        """alice's mention in a thread: GitLab sends that note alone."""
        api, merge_request = self.forge.api, self.forge.merge_requests[number]
        [note] = [n for n in api.notes.values() if n.discussion_id == mentioned]
        payload = diff_note_hook(api, self.forge.project, merge_request, note, "alice")
        answer = post(ingress(stack, monkeypatch), gitlab("Note Hook", payload))
        assert answer.status_code == 202, answer.text
        job_id = int(answer.json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled()
        return job_id

    def bot_replies(self) -> list[tuple[str, str]]:
        bot = self.forge.api.add_user(BOT)
        notes = self.forge.api.notes.values()
        return [
            (n.discussion_id, n.body) for n in notes if n.author == bot and n.type == "DiffNote"
        ]

    def resolved_by_bot(self) -> list[str]:
        bot = self.forge.api.add_user(BOT)
        notes = self.forge.api.notes.values()
        tried = [d for d, resolved, user in self.forge.api.resolutions if resolved and user == bot]
        assert {n.discussion_id for n in notes if n.resolved} == {*tried, self.done}
        return tried

    @property
    def done(self) -> str:
        [note] = [n for n in self.forge.api.notes.values() if n.body == DONE]
        return note.discussion_id


def threads_of(forge: Forge) -> Threads:
    if isinstance(forge, GitHubForge):
        return GitHubThreads(forge)
    assert isinstance(forge, GitLabForge)
    return GitLabThreads(forge)


def documents_add(threads: list[str]) -> list[Reply]:
    """The model's part: a docstring, its own words in the first thread, none in the third."""
    return [
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
