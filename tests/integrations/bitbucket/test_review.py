"""A review on Bitbucket Cloud, against the stand-in: its line comments on both sides of the
diff, a suggestion written out, "request changes", then the tagged summary; every call is one
the published API description has, and a retry posts nothing twice."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet

from integrations.bitbucket.provider import hidden_tag
from integrations.bitbucket.review import SUGGESTED, post_review
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.conformance import answer_problems, request_problems
from integrations.bitbucket.standin.state import Pull
from resolver.contract.errors import TransientCallbackError
from resolver.contract.review import DiffComment, ReviewPost
from resolver.contract.triggers import PullRequest, Repository
from resolver.core.settings import Settings, get_settings
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO

PULL = "/repositories/acme/widgets/pullrequests/1"
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
def settings(bitbucket_api: BitbucketAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    from tests.conftest import reset_caches

    monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", bitbucket_api.api_url)
    monkeypatch.setenv("RESOLVER_BITBUCKET_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    reset_caches()
    yield get_settings()
    reset_caches()


def trigger(pull: Pull) -> PullRequest:
    return PullRequest(repo=Repository(full_name=REPO), number=pull.id)


def test_a_review_is_its_line_comments_a_request_for_changes_and_a_tagged_summary(
    bitbucket_api: BitbucketAPI, pull: Pull, settings: Settings
) -> None:
    ref = post_review(trigger(pull), None, REVIEW, settings)

    writes = [(r.method, r.path, r.body) for r in bitbucket_api.requests if r.method != "GET"]
    tag = hidden_tag("review-41")
    assert writes == [
        (
            "POST",
            f"{PULL}/comments",
            {
                "content": {"raw": f"Empty input crashes here.\n\n{tag}"},
                "inline": {"path": "core.py", "to": 3},
            },
        ),
        (
            "POST",
            f"{PULL}/comments",
            {
                "content": {"raw": f"This check was needed.\n\n{tag}"},
                "inline": {"path": "core.py", "from": 7},
            },
        ),
        (
            "POST",
            f"{PULL}/comments",
            {
                "content": {
                    "raw": f"Name it.\n\n{SUGGESTED}\n\n```suggestion\nwidth = 3\n```\n\n{tag}"
                },
                "inline": {"path": "util.py", "to": 2},
            },
        ),
        ("POST", f"{PULL}/request-changes", None),
        ("POST", f"{PULL}/comments", {"content": {"raw": f"Two things to fix.\n\n{tag}"}}),
    ]
    summary = max(bitbucket_api.comments)
    assert ref == {"comment_id": summary, "tag": "review-41"}
    anchors = [(c.path, c.side, c.line) for c in bitbucket_api.comments.values()]
    assert anchors == [
        ("core.py", "to", 3),
        ("core.py", "from", 7),
        ("util.py", "to", 2),
        (None, "to", None),
    ]
    assert pull.changes_requested == {bitbucket_api.add_user("resolver")}
    problems = [
        p
        for r in bitbucket_api.requests
        for p in request_problems(r.method, r.path, list(r.query), r.body)
    ]
    problems += [
        p for a in bitbucket_api.answers for p in answer_problems(a.method, a.path, a.body)
    ]
    assert problems == []

    # A retry (its answer lost) finds the summary and posts nothing.
    before = len(bitbucket_api.requests)
    assert post_review(trigger(pull), None, REVIEW, settings) == ref
    assert [r.method for r in bitbucket_api.requests[before:]] == ["GET", "GET"]
    assert len(bitbucket_api.comments) == 4


def test_a_retry_after_a_failure_posts_only_what_is_missing(
    bitbucket_api: BitbucketAPI, pull: Pull, settings: Settings
) -> None:
    route = "POST /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/comments"
    bitbucket_api.fail(route, 502, applied=True)  # the first line comment's answer is lost
    with pytest.raises(TransientCallbackError):
        post_review(trigger(pull), None, REVIEW, settings)
    assert len(bitbucket_api.comments) == 1

    post_review(trigger(pull), None, REVIEW, settings)

    bodies = [c.raw.partition("\n")[0] for c in bitbucket_api.comments.values()]
    assert bodies == [
        "Empty input crashes here.",
        "This check was needed.",
        "Name it.",
        "Two things to fix.",
    ]


def test_a_comment_only_review_requests_no_changes_and_someone_elses_tag_is_not_ours(
    bitbucket_api: BitbucketAPI, pull: Pull, settings: Settings
) -> None:
    bitbucket_api.add_comment(pull, f"Copied\n\n{hidden_tag('review-41')}", "alice")
    review = ReviewPost("Fine.", "comment", (), "b" * 40, "a" * 40, "a" * 40, "review-41")

    post_review(trigger(pull), None, review, settings)

    assert pull.changes_requested == set()
    assert [c.raw.partition("\n")[0] for c in bitbucket_api.comments.values()] == [
        "Copied",
        "Fine.",
    ]


def test_a_refused_request_for_changes_still_posts_the_review(
    bitbucket_api: BitbucketAPI, pull: Pull, settings: Settings
) -> None:
    """Where Bitbucket refuses "request changes" (the bot's own pull request, say), the summary's
    words say it alone."""
    route = (
        "POST /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/request-changes"
    )
    bitbucket_api.fail(route, 400)

    post_review(trigger(pull), None, REVIEW, settings)

    assert pull.changes_requested == set() and len(bitbucket_api.comments) == 4
