"""`conflicts: fix`: a push job's unresolved pull requests each get one comment, recorded with
the job's end, once per pull request per base commit (a notice), naming the files and the job."""

from __future__ import annotations

from typing import Any

from resolver.callbacks.record import record_finish
from resolver.contract.triggers import number_of, read_trigger
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.features.conflicts.contract import Unresolved
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Notice
from tests.conftest import ResolverEnv

REPO = "octo/widgets"
BASE = "b" * 40
# A file name is repository data: one that leaves its code span is sanitised like prose.
LEFT = Unresolved("main", "resolver/7-add", BASE, ("calc.py", "a`<img src=x>.py"))


def finished_push_job(pulls: dict[str, Any], *, push: bool = True) -> tuple[int, list[int]]:
    """A push job (or, `push=False`, a `@bot rebase`) that ended with `pulls`; its id and the
    callbacks its end recorded."""
    trigger: dict[str, Any] = {"repo": REPO, "installation_id": 42}
    if push:
        trigger["base_push"] = {"branch": "main", "sha": BASE}
    with session_scope() as session:
        new = jobs.NewJob(source="github", task="update", repo=REPO, trigger=trigger)
        job = jobs.create_job(session, new)
        job.state, job.outcome = JobState.FAILED, Outcome.COULD_NOT
        job.result = {"quiet": True, "pulls": pulls}
        return job.id, record_finish(session, job, get_settings())


def reports() -> list[tuple[str, str, dict[str, Any]]]:
    with session_scope() as session:
        return [
            (notice.dedup_key, notice.body, dict(notice.context))
            for notice in session.query(Notice).filter(Notice.kind == "conflicts_unresolved")
        ]


def test_an_unresolved_pull_request_gets_one_comment_with_its_files_and_the_job(
    resolver_env: ResolverEnv,
) -> None:
    failed = {"state": "failed", "outcome": "could_not", "unresolved": LEFT.as_context()}
    clean = {"state": "succeeded", "outcome": "no_changes", "unresolved": None}
    job_id, callbacks = finished_push_job({"3": failed, "4": clean})

    [(key, body, context)] = reports()
    assert key == f"conflicts:{REPO}:3:{BASE}"
    assert "I could not merge `main` into `resolver/7-add`" in body
    assert "`calc.py`" in body and "nothing was pushed" in body
    assert f"[job {job_id}](http" in body and f"/jobs/{job_id})" in body
    assert "<img" not in body
    pull = read_trigger(context)
    assert number_of(pull) == 3 and pull.reach == {"installation_id": 42}
    with session_scope() as session:
        actions = {session.get(Callback, i).action for i in callbacks}  # type: ignore[union-attr]
    assert "notice" in actions  # a push job says nothing else: it is quiet


def test_the_same_base_commit_is_reported_once_and_a_new_one_again(
    resolver_env: ResolverEnv,
) -> None:
    failed = {"state": "failed", "unresolved": LEFT.as_context()}
    _, first = finished_push_job({"3": failed})
    _, again = finished_push_job({"3": failed})
    moved = Unresolved("main", "resolver/7-add", "c" * 40, LEFT.files)
    _, later = finished_push_job({"3": {"state": "failed", "unresolved": moved.as_context()}})

    assert len(first) == 1 and again == [] and len(later) == 1
    assert [key[-3:] for key, _, _ in reports()] == ["bbb", "ccc"]


def test_a_rebase_asked_for_in_a_conversation_is_reported_there_only(
    resolver_env: ResolverEnv,
) -> None:
    finished_push_job({"3": {"state": "failed", "unresolved": LEFT.as_context()}}, push=False)
    assert reports() == []
