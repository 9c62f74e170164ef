"""A review the forge never takes, against the GitHub stand-in: the review callback fails for
good (GitHub refuses a comment off the diff with 422) and is counted; the watchdog then fails
the job, saying why, on its page and in the pull request: in the status message of a review
someone asked for, in one plain comment for an auto-review (which has no status message). The
comment is sent once, even when it fails too."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import select

import integrations.github.provider  # noqa: F401  (registers the forge, as workers do)
from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.callbacks import record
from resolver.callbacks.send import send
from resolver.contract.outbound import REPLY
from resolver.contract.review import POST_REVIEW, DiffComment
from resolver.contract.triggers import Repository, ReviewRequest, dump_trigger
from resolver.core.settings import Settings, get_settings
from resolver.core.states import JobState, Outcome
from resolver.features.ci.contract import QUIET
from resolver.features.review_requests.contract import RESULT_KEY, ReviewResult
from resolver.store import callbacks as store_callbacks
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback
from resolver.worker import watchdog
from tests.conftest import ResolverEnv, reset_caches
from tests.e2e.conflicts_flow import commit_to
from tests.e2e.github_flow import github_settings
from tests.integrations.github.conftest import (
    INSTALLATION_ID,
    REPO,
    app_key,
    git_server,
    github_api,
    key_file,
)

__all__ = ["app_key", "git_server", "github_api", "key_file"]

COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
OFF_THE_DIFF = DiffComment("README.md", 1, "RIGHT", "Never changed by this pull request.")
REFUSED = "Pull request review thread line must be part of the diff"


@pytest.fixture
def settings(
    resolver_env: ResolverEnv,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> Settings:
    """`octo/widgets` with alice's pull request #1, which changes calc.py only."""
    bare = create_bare_repo(git_server.root, REPO, {"README.md": "# widgets\n", "calc.py": "x\n"})
    run_git("--git-dir", str(bare), "branch", "feature", "main")
    commit_to(bare, "feature", {"calc.py": "x\ny\n"}, "Add y")
    github_api.add_repo(REPO, git_server.url_for(REPO), bare=bare)
    github_api.add_pull(REPO, "feature", "main", "Add y", "alice")
    for key, value in github_settings(github_api, key_file).items():
        monkeypatch.setenv(key, value)
    reset_caches()
    return get_settings()


def finished_review(auto: bool) -> int:
    """A review job that finished its review of #1, as the worker leaves it; its id."""
    trigger = ReviewRequest(
        repo=Repository(full_name=REPO),
        number=1,
        auto=auto,
        reach={"installation_id": INSTALLATION_ID},
    )
    review = ReviewResult("One thing.", "comment", (OFF_THE_DIFF,), "h", "b", "s")
    with session_scope() as session:
        new = jobs.NewJob("github", "review", REPO, trigger=dump_trigger(trigger))
        job = jobs.create_job(session, new)
        jobs.transition(job, JobState.RUNNING)
        result = {RESULT_KEY: review.as_dict(), QUIET: auto, "summary": "I reviewed it."}
        jobs.finish_job(session, job, JobState.SUCCEEDED, Outcome.ANSWERED, result=result)
        return job.id


def end_job(job_id: int, settings: Settings) -> None:
    """What the worker records when the job ends, each callback sent as its task sends it."""
    with session_scope() as session:
        ids = record.record_finish(session, jobs.get_job(session, job_id), settings)
    for callback_id in ids:
        assert send(callback_id, settings) is None


def sweep(settings: Settings) -> list[int]:
    """One watchdog sweep, its callbacks sent after the commit."""
    with session_scope() as session:
        ids = watchdog.sweep(session, settings)
    for callback_id in ids:
        assert send(callback_id, settings) is None
    return ids


def failed_reviews() -> float:
    value = REGISTRY.get_sample_value("resolver_callbacks_failed_total", {"action": POST_REVIEW})
    return value or 0.0


def bot_comments(github_api: GitHubAPI) -> list[str]:
    return [c.body for c in github_api.comments.values() if c.login == BOT_LOGIN]


def job_row(job_id: int) -> tuple[str, str | None, str | None]:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        return job.state, job.outcome, job.error


def test_an_auto_review_the_forge_refuses_fails_its_job_and_says_so_once_on_the_pull_request(
    backend: str, settings: Settings, github_api: GitHubAPI
) -> None:
    counted = failed_reviews()
    job_id = finished_review(auto=True)
    end_job(job_id, settings)
    assert github_api.reviews == [] and bot_comments(github_api) == []  # quiet: no status
    assert failed_reviews() == counted + 1

    assert len(sweep(settings)) == 1
    state, outcome, error = job_row(job_id)
    assert (state, outcome) == (JobState.FAILED, Outcome.ERROR)
    assert error is not None and error.startswith(
        "I reviewed this pull request, but the review could not be posted: "
    )
    assert REFUSED in error
    [said] = bot_comments(github_api)
    assert said.startswith(error)
    assert f"[its job's page]({record.job_url(job_id, settings)})" in said
    assert sweep(settings) == [] and len(bot_comments(github_api)) == 1  # once


def test_a_review_someone_asked_for_says_so_in_its_status_message(
    settings: Settings, github_api: GitHubAPI
) -> None:
    job_id = finished_review(auto=False)
    end_job(job_id, settings)
    [status] = bot_comments(github_api)
    assert status.startswith("✅ **Answered**")

    sweep(settings)
    [status] = bot_comments(github_api)  # the one status message, edited
    assert status.startswith("❌ **Failed.**") and REFUSED in status
    assert "**Run again**" in status
    assert job_row(job_id)[0] == JobState.FAILED


def test_when_the_comment_fails_too_it_is_not_sent_again(
    settings: Settings, github_api: GitHubAPI
) -> None:
    job_id = finished_review(auto=True)
    end_job(job_id, settings)
    github_api.fail(COMMENTS, 403, times=5)

    [reply] = sweep(settings)
    assert sweep(settings) == []
    with session_scope() as session:
        rows = session.scalars(select(Callback).where(Callback.job_id == job_id)).all()
        assert [(r.action, r.state) for r in rows] == [(POST_REVIEW, "failed"), (REPLY, "failed")]
    assert bot_comments(github_api) == [] and reply == rows[1].id


def test_two_sweeps_at_once_fail_an_auto_review_once_and_comment_once(
    backend: str, settings: Settings, github_api: GitHubAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another sweep (a reconciler whose slot overlapped this one's) fails the job, to its
    commit, between this sweep's read of the failed reviews and its write: this one passes
    over the job, which it read as succeeded."""
    job_id = finished_review(auto=True)
    end_job(job_id, settings)
    real = store_callbacks.recently_failed
    other: list[list[int]] = []

    def read_then_the_other(session, action, since):
        found = real(session, action, since)
        if action == POST_REVIEW and not other:
            other.append([])
            thread = threading.Thread(target=lambda: other.append(sweep(settings)))
            thread.start()
            thread.join(60)
        return found

    monkeypatch.setattr(store_callbacks, "recently_failed", read_then_the_other)

    assert sweep(settings) == []
    assert len(other[1]) == 1
    assert job_row(job_id)[:2] == (JobState.FAILED, Outcome.ERROR)
    assert len(bot_comments(github_api)) == 1
