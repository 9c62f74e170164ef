"""GitLab end to end: a failed Pipeline Hook on the bot's own merge request makes one fix job
whose prompt holds the end of the failed job's trace; a second failure on the same head commit
after `max_attempts` makes no agent run and says nothing (issue 22, item 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resolver.contract.triggers import failed_check_in, read_trigger
from tests.conftest import ResolverEnv
from tests.e2e.gitlab_flow import (
    PROJECT,
    bot_notes_on,
    gitlab_settings,
    note_hook,
    store_bot_token,
)
from tests.e2e.stack import REPO_FILES, Stack, by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import gitlab, load, post
from tests.support.git_http import GitHttpServer, branch_head, create_bare_repo
from tests.support.gitlab_api import DEVELOPER, GitLabAPI, MergeRequest, Project
from tests.support.llm_server import finish

pytestmark = pytest.mark.timeout(420)

TEST_JOB, LINT_JOB = 24187639, 24187640
LOG_END = "FAILED test_calc.py::AddTest::test_add - AssertionError: -1 != 5 (LOG-END-MARKER)"
CONFIG = "ci:\n  fix: true\n  max_attempts: 1\n"
TRACE = "GET /projects/{id}/jobs/{job_id}/trace"


def with_config(api: GitLabAPI, git: GitHttpServer) -> tuple[Project, Path]:
    """`group/widgets` opted in to CI fixes (one attempt per commit), with issue #7; the failed
    job's long log."""
    bare = create_bare_repo(git.root, PROJECT, {**REPO_FILES, ".resolver/config.yml": CONFIG})
    project = api.add_project(PROJECT, git.url_for(PROJECT), bare=bare)
    api.add_member(project, api.add_user("alice"), DEVELOPER)
    api.add_issue(project, 7, "add() subtracts instead of adding")
    noise = b"".join(b"2026-01-01T00:00:00Z noise %d\n" % n for n in range(3000))
    api.job_traces[TEST_JOB] = noise + LOG_END.encode() + b"\n"
    api.job_traces[LINT_JOB] = b"lint failed\n"
    return project, bare


def opened_merge_request(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, api: GitLabAPI, project: Project
) -> MergeRequest:
    """alice asks on issue #7; the bot fixes add() and opens its draft merge request."""
    stack.link("alice", "gitlab", str(api.add_user("alice")), "alice")
    store_bot_token(api)
    stack.llm.set_script(by_step(fix_script()))
    stack.start_worker()
    payload = note_hook(api, project, "@resolver please fix add()")
    answer = post(ingress(stack, monkeypatch), gitlab("Note Hook", payload))
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    [merge_request] = api.merge_requests
    return merge_request


def failed_pipeline(
    api: GitLabAPI, project: Project, merge_request: MergeRequest, sha: str, job: tuple[int, str]
) -> dict[str, Any]:
    """The recorded failed Pipeline Hook, on the stand-in's merge request, with one failed job
    that may not fail (`job`: its id and name)."""
    payload = load("gitlab", "Pipeline_Hook__failed_on_merge_request")
    web_url = f"{api.url}/{PROJECT}"
    payload["project"].update(
        id=project.id,
        path_with_namespace=PROJECT,
        git_http_url=project.clone_url,
        default_branch=project.default_branch,
        web_url=web_url,
    )
    pipeline_id = api.new_id()
    payload["object_attributes"].update(
        id=pipeline_id, sha=sha, ref=merge_request.source_branch,
        url=f"{web_url}/-/pipelines/{pipeline_id}",
    )  # fmt: skip
    payload["merge_request"].update(
        iid=merge_request.iid,
        title=merge_request.title,
        source_branch=merge_request.source_branch,
        target_branch=merge_request.target_branch,
        source_project_id=project.id,
        target_project_id=project.id,
        url=f"{web_url}/-/merge_requests/{merge_request.iid}",
    )
    job_id, name = job
    payload["builds"] = [
        {**build, "id": job_id, "name": name, "allow_failure": False}
        for build in payload["builds"]
        if build["status"] == "failed" and not build["allow_failure"]
    ]
    return payload


def test_a_failed_pipeline_makes_one_fix_job_with_its_trace_and_the_bound_holds(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gitlab_api: GitLabAPI,
    gitlab_git: GitHttpServer,
) -> None:
    project, bare = with_config(gitlab_api, gitlab_git)
    with running_stack(resolver_env, tmp_path, **gitlab_settings(gitlab_api)) as stack:
        merge_request = opened_merge_request(stack, monkeypatch, gitlab_api, project)
        sha = branch_head(bare, merge_request.source_branch)
        assert sha is not None
        stack.llm.set_script(by_step([finish("could_not", "Tried: read the failing test.")]))
        before = len(stack.llm.requests)
        client = ingress(stack, monkeypatch)
        red = failed_pipeline(gitlab_api, project, merge_request, sha, (TEST_JOB, "test"))
        answer = post(client, gitlab("Pipeline Hook", red))
        assert answer.status_code == 202, answer.text
        fix = stack.wait_finished(int(answer.json()["job_id"]))
        stack.wait_callbacks_settled()
        prompt = json.dumps(stack.llm.requests[before:])
        asked = len(stack.llm.requests)

        # Another pipeline fails on the same head commit: max_attempts (1) is used up.
        red = failed_pipeline(gitlab_api, project, merge_request, sha, (LINT_JOB, "lint"))
        again = post(client, gitlab("Pipeline Hook", red))
        assert again.status_code == 202, again.text
        second = stack.wait_finished(int(again.json()["job_id"]))
        stack.wait_callbacks_settled()

    assert fix.outcome == "could_not", fix.error
    check = failed_check_in(read_trigger(fix.trigger))
    assert check is not None and check.name == "test"
    assert fix.requester == "alice"
    assert fix.branch == merge_request.source_branch
    assert LOG_END in prompt
    assert "noise 0\\n" not in prompt  # only the tail of the trace, within its budget
    assert "the start of the log is cut" in prompt
    traces = gitlab_api.calls(TRACE)
    assert [r.path.rsplit("/", 2)[-2] for r in traces] == [str(TEST_JOB)]
    [status] = bot_notes_on(gitlab_api, merge_request.iid)
    assert "failing check `test`" in status and "attempt 1 of 1" in status
    assert "Tried: read the failing test." in status
    # The second failure ran no agent, read no trace and said nothing.
    assert (second.outcome, second.result.get("quiet")) == ("no_changes", True)
    assert len(stack.llm.requests) == asked
    assert len(bot_notes_on(gitlab_api, merge_request.iid)) == 1
