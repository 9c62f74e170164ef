"""GitLab: a failed pipeline of a merge request from the bot's branch follows up the branch's
job with its first failed job (one allowed to fail is not it); the job's log is read to its
tail from the trace API."""

from __future__ import annotations

import copy
from typing import Any

from integrations.gitlab.client import GitLabClient
from integrations.gitlab.standin.api import GitLabAPI, Project
from resolver.contract.triggers import CiFailure, read_trigger
from resolver.features.ci.contract import LOG_READ_BYTES, LOG_TAIL_CHARS, tail
from resolver.store import jobs
from resolver.store.db import session_scope
from tests.integrations.deliveries import gitlab, load, post
from tests.integrations.gitlab.conftest import BOT_TOKEN

BRANCH = "resolver/1-fix-export"
FIXTURE = "Pipeline_Hook__failed_on_merge_request"


def pipeline(**changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(load("gitlab", FIXTURE))
    payload["object_attributes"].update(changes)
    return payload


def branch_job(store: Any) -> None:
    store.link("gitlab", "1", "root")
    with session_scope() as session:
        job = jobs.create_job(
            session,
            jobs.NewJob(
                source="gitlab",
                task="fix the export",
                repo="gitlabhq/gitlab-test",
                requester="root",
                trigger={"sender": {"id": "1", "login": "root"}},
            ),
        )
        job.branch, job.requester_id = BRANCH, 1


def test_a_failed_pipeline_on_the_bots_branch_makes_a_fix_job(
    webhook_client: Any, store: Any
) -> None:
    branch_job(store)
    response = post(webhook_client, gitlab("Pipeline Hook", pipeline()))

    assert response.status_code == 202, response.text
    job = store.jobs()[-1]
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, CiFailure) and trigger.number == 1
    check = trigger.check
    assert (check.name, check.check_id, check.pipeline_id) == ("test", 381, 31)
    assert job.conversation_key == "gitlab:gitlabhq/gitlab-test!1"
    assert [c for c in store.callbacks() if c.job_id == job.id] == []


def test_green_pipelines_and_other_branches_answer_204(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    other = pipeline()
    other["merge_request"]["source_branch"] = "feature/x"
    no_merge_request = pipeline()
    no_merge_request["merge_request"] = None
    for payload in (pipeline(status="success"), other, no_merge_request):
        assert post(webhook_client, gitlab("Pipeline Hook", payload)).status_code == 204
    assert len(store.jobs()) == 1


def test_the_failed_jobs_log_is_read_to_its_tail(
    gitlab_api: GitLabAPI, project: Project, client: GitLabClient
) -> None:
    gitlab_api.job_traces[381] = b"".join(b"noise %d\n" % n for n in range(5000)) + b"E boom\n"

    kept = client.job_trace_tail(project.id, 381, LOG_TAIL_CHARS * 4, LOG_READ_BYTES)
    text, cut = tail(kept.decode())

    assert text.endswith("E boom\n") and len(text) <= LOG_TAIL_CHARS
    assert cut and "noise 0\n" not in text
    [call] = gitlab_api.requests
    assert call.path == f"/projects/{project.id}/jobs/381/trace"
    assert call.headers["private-token"] == BOT_TOKEN
