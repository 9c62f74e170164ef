"""A review on Azure Repos, against the stand-in: a thread per line comment (its context on the
head's or the base's side), a suggestion as a `suggestion` block, the summary as a thread of
its own, and the bot's vote "waiting for the author" only where it is a reviewer; every call is
one Microsoft's descriptions have, and a retry posts nothing twice."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet

from integrations.azuredevops.review import WAITING_FOR_AUTHOR, post_review
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.conformance import (
    answer_problems,
    request_problems,
    shape_problems,
)
from integrations.azuredevops.standin.state import Pull, Repo
from resolver.contract.errors import TransientCallbackError
from resolver.contract.outbound import hidden_tag
from resolver.contract.review import DiffComment, ReviewPost
from resolver.contract.triggers import PullRequest, Repository
from resolver.core.settings import Settings, get_settings
from tests.integrations.azuredevops.conftest import BOT_TOKEN, REPO

THREADS = (
    "POST /{organization}/{project}/_apis/git/repositories/{repositoryId}/pullRequests"
    "/{pullRequestId}/threads"
)
VOTE = (
    "PUT /{organization}/{project}/_apis/git/repositories/{repositoryId}/pullRequests"
    "/{pullRequestId}/reviewers/{reviewerId}"
)
REVIEW = ReviewPost(
    summary="Two things to fix.",
    verdict="request_changes",
    comments=(
        DiffComment("core.py", 3, "RIGHT", "Empty input crashes here."),
        DiffComment("core.py", 7, "LEFT", "This check was needed.", old_line=7),
        DiffComment("util.py", 2, "RIGHT", "Name it.", suggestion="width = 3\n"),
    ),
    head_sha="b" * 40,
    base_sha="a" * 40,
    start_sha="a" * 40,
    tag="review-41",
)


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
    return azure_api.add_pull(repo, "fix-add", azure_api.add_person("alice@contoso.com"))


def trigger(pull: Pull) -> PullRequest:
    return PullRequest(repo=Repository(full_name=REPO), number=pull.id)


def line(path: str, side: str, number: int) -> dict[str, object]:
    at = {"line": number, "offset": 1}
    return {"filePath": path, f"{side}FileStart": at, f"{side}FileEnd": at}


def test_a_review_is_a_thread_per_comment_the_summary_and_the_bots_vote(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    bot = azure_api.add_person("resolver@contoso.com")
    pull.reviewers[bot.id] = 0  # the bot was asked to review

    ref = post_review(trigger(pull), None, REVIEW, settings)

    tag = hidden_tag("review-41")
    posted = [
        (r.body["comments"][0]["content"], r.body.get("threadContext"))
        for r in azure_api.calls(THREADS)
    ]
    assert posted == [
        (f"Empty input crashes here.\n{tag}", line("/core.py", "right", 3)),
        (f"This check was needed.\n{tag}", line("/core.py", "left", 7)),
        (f"Name it.\n\n```suggestion\nwidth = 3\n```\n{tag}", line("/util.py", "right", 2)),
        (f"Two things to fix.\n{tag}", None),
    ]
    assert {r.body["status"] for r in azure_api.calls(THREADS)} == {"active"}
    assert [(t.status, t.context) for t in pull.threads][1] == (
        "active",
        line("/core.py", "left", 7),
    )
    [vote] = azure_api.calls(VOTE)
    assert (vote.path.rsplit("/", 1)[1], vote.body) == (bot.id, {"vote": WAITING_FOR_AUTHOR})
    assert pull.reviewers == {bot.id: WAITING_FOR_AUTHOR}
    summary = pull.threads[-1]
    assert ref == {"thread": summary.id, "id": summary.comments[0].id, "tag": "review-41"}
    problems = [
        p for r in azure_api.requests for p in request_problems(r.method, r.path, r.query, r.body)
    ]
    problems += [p for a in azure_api.answers for p in answer_problems(a.method, a.path, a.body)]
    problems += [
        p
        for r in azure_api.calls(THREADS)
        for p in shape_problems("git:GitPullRequestCommentThread", r.body, "thread")
    ]
    assert problems == []

    # A retry (its answer lost) finds the summary and the vote, and posts nothing.
    before = len(azure_api.requests)
    assert post_review(trigger(pull), None, REVIEW, settings) == ref
    assert [r.method for r in azure_api.requests[before:]] == ["GET", "GET"]
    assert len(pull.threads) == 4


def test_a_retry_after_a_lost_answer_posts_only_what_is_missing(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    azure_api.fail(THREADS, 503, applied=True)  # the first line thread's answer is lost
    with pytest.raises(TransientCallbackError):
        post_review(trigger(pull), None, REVIEW, settings)
    assert len(pull.threads) == 1

    post_review(trigger(pull), None, REVIEW, settings)

    assert [t.comments[0].content.partition("\n")[0] for t in pull.threads] == [
        "Empty input crashes here.",
        "This check was needed.",
        "Name it.",
        "Two things to fix.",
    ]


def test_a_bot_that_is_no_reviewer_requests_changes_in_words_only(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    post_review(trigger(pull), None, REVIEW, settings)

    assert azure_api.calls(VOTE) == [] and pull.reviewers == {}
    assert len(pull.threads) == 4


def test_a_comment_only_review_never_votes(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    pull.reviewers[azure_api.add_person("resolver@contoso.com").id] = 0
    review = ReviewPost("Fine.", "comment", (), "b" * 40, "a" * 40, "a" * 40, "review-41")

    post_review(trigger(pull), None, review, settings)

    assert azure_api.calls(VOTE) == [] and [len(pull.threads)] == [1]


def test_a_pasted_tag_is_not_the_bots_review(
    azure_api: AzureDevOpsAPI, pull: Pull, settings: Settings
) -> None:
    """Someone who writes the review's hidden tag (a summary, a line comment at a line the
    review comments on) suppresses nothing: only the bot's own threads count as posted."""
    alice = azure_api.add_person("alice@contoso.com")
    tag = hidden_tag("review-41")
    azure_api.add_thread(pull, alice, f"Looks done to me.\n{tag}")
    azure_api.add_thread(
        pull, alice, f"Empty input crashes here.\n{tag}", context=line("/core.py", "right", 3)
    )
    bot = azure_api.add_person("resolver@contoso.com")
    pull.reviewers[bot.id] = 0

    ref = post_review(trigger(pull), None, REVIEW, settings)

    ours = [t for t in pull.threads if t.comments[0].author == bot.id]
    assert [t.comments[0].content.partition("\n")[0] for t in ours] == [
        "Empty input crashes here.",
        "This check was needed.",
        "Name it.",
        "Two things to fix.",
    ]
    assert ref["thread"] == ours[-1].id and pull.reviewers == {bot.id: WAITING_FOR_AUTHOR}
