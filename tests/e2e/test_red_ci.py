"""End to end, on each forge: a failure of CI on the bot's own pull (request), a red check on
GitHub, a failed pipeline on GitLab or a failed Pipelines build status on Bitbucket, makes one
fix job whose prompt holds the end of the failed job's log; the attempt bound and a person's
push stop the loop (issue 22, item 3).

The bound, a person's commit, the log's tail and the fenced report are decided without a stack
(tests/features/ci/)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

import pytest

from integrations.bitbucket.standin import conformance as bitbucket_conformance
from integrations.bitbucket.standin.pipelines import Step
from integrations.github.standin.api import conformance_problems
from integrations.standin.git_http import branch_head, run_git
from resolver.contract.triggers import failed_check_in, read_trigger
from tests.conftest import ResolverEnv
from tests.e2e.forges import FORGES, BitbucketForge, Forge, GitHubForge, GitLabForge, deliver, ended
from tests.e2e.gitlab_flow import PROJECT
from tests.e2e.stack import REPO_FILES, by_step, fix_script, running_stack
from tests.integrations.bitbucket import flow as bitbucket_flow
from tests.integrations.deliveries import Delivery, github, gitlab, load
from tests.integrations.github.conftest import INSTALLATION_ID, REPO
from tests.support.llm_server import finish

pytestmark = pytest.mark.timeout(420)

LOG_END = "FAILED test_calc.py::AddTest::test_add - AssertionError: -1 != 5 (LOG-END-MARKER)"
NOISE = "".join(f"2026-01-01T00:00:00Z noise {n}\n" for n in range(3000))
CONFIG = "ci:\n  fix: true\n  max_attempts: 1\n"
CHECK_ID = 24187639152
ANNOTATION = "AssertionError: -1 != 5 (ANNOTATION-MARKER)"
JOBS = {"test": 24187639, "lint": 24187640}  # GitLab's failed jobs, by name
TRACE = "GET /projects/{id}/jobs/{job_id}/trace"


class CI(Protocol):
    """The forge's CI: the failed job's log, the delivery saying it failed, and how the log was
    read."""

    def record_logs(self) -> None: ...

    def failed(self, number: int, branch: str, sha: str, name: str) -> Delivery: ...

    def assert_read_as_documented(self, prompt: str) -> None: ...

    def check_name(self, name: str) -> str:
        """What the forge calls the failure of job `name` (GitHub's check, GitLab's job)."""
        return name


@dataclass
class GitHubChecks(CI):
    forge: GitHubForge

    def record_logs(self) -> None:
        checks = self.forge.api.checks
        checks.annotations[CHECK_ID] = [
            {
                "path": "test_calc.py",
                "start_line": 8,
                "end_line": 8,
                "annotation_level": "failure",
                "title": "test_add",
                "message": ANNOTATION,
                "raw_details": None,
                "blob_href": "https://github.com/octo/widgets/blob/x/test_calc.py",
            }
        ]
        checks.logs[CHECK_ID] = NOISE + LOG_END + "\n"

    def failed(self, number: int, branch: str, sha: str, name: str) -> Delivery:
        """The recorded failing check_run.completed, on the stand-in's repository and pull."""
        payload: dict[str, Any] = load("github", "check_run.completed__failure_on_bot_branch")
        run = payload["check_run"]
        run.update(id=CHECK_ID, name=name, head_sha=sha)
        for entry in run["pull_requests"]:
            entry.update(number=number)
            entry["head"].update(ref=branch, sha=sha)
        payload["repository"].update(
            full_name=REPO,
            name=REPO.split("/")[1],
            clone_url=self.forge.git.url_for(REPO),
            default_branch="main",
        )
        payload["installation"] = {"id": INSTALLATION_ID}
        return github("check_run.completed", payload)

    def assert_read_as_documented(self, prompt: str) -> None:
        assert ANNOTATION in prompt
        # The download URL got no token; every API call is one GitHub documents.
        downloads = self.forge.api.checks.downloads
        assert downloads and all("authorization" not in headers for headers in downloads)
        assert conformance_problems(self.forge.api.requests) == []


@dataclass
class GitLabPipelines(CI):
    forge: GitLabForge

    def record_logs(self) -> None:
        self.forge.api.job_traces[JOBS["test"]] = (NOISE + LOG_END + "\n").encode()
        self.forge.api.job_traces[JOBS["lint"]] = b"lint failed\n"

    def failed(self, number: int, branch: str, sha: str, name: str) -> Delivery:
        """The recorded failed Pipeline Hook, on the stand-in's merge request, with one failed
        job (`name`) that may not fail."""
        api, project = self.forge.api, self.forge.project
        merge_request = self.forge.merge_requests[number]
        payload: dict[str, Any] = load("gitlab", "Pipeline_Hook__failed_on_merge_request")
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
            id=pipeline_id, sha=sha, ref=branch, url=f"{web_url}/-/pipelines/{pipeline_id}"
        )
        payload["merge_request"].update(
            iid=number,
            title=merge_request.title,
            source_branch=branch,
            target_branch=merge_request.target_branch,
            source_project_id=project.id,
            target_project_id=project.id,
            url=f"{web_url}/-/merge_requests/{number}",
        )
        payload["builds"] = [
            {**build, "id": JOBS[name], "name": name, "allow_failure": False}
            for build in payload["builds"]
            if build["status"] == "failed" and not build["allow_failure"]
        ]
        return gitlab("Pipeline Hook", payload)

    def assert_read_as_documented(self, prompt: str) -> None:
        traces = self.forge.api.calls(TRACE)  # the failed job's only: not the second one's
        assert [r.path.rsplit("/", 2)[-2] for r in traces] == [str(JOBS["test"])]


@dataclass
class BitbucketPipelines(CI):
    """A Pipelines run per failure, on the bot's branch head: its `test` or `lint` step failed,
    the other passed. The log holds the bot's token, which must not reach the prompt."""

    forge: BitbucketForge
    names: dict[str, str] = field(default_factory=dict)

    def check_name(self, name: str) -> str:
        """A Pipelines build status names the run, not the step that failed."""
        return self.names[name]

    def record_logs(self) -> None:
        """The runs are made when the status is sent: they need the branch's head."""

    def failed(self, number: int, branch: str, sha: str, name: str) -> Delivery:
        api = self.forge.api
        logs = {
            "test": NOISE + bitbucket_flow.BOT_TOKEN + "\n" + LOG_END + "\n",
            "lint": "lint failed\n",
        }
        steps = [
            Step("FAILED" if step == name else "SUCCESSFUL", log=logs[step].encode())
            for step in logs
        ]
        run = api.add_pipeline(self.forge.repo, branch, sha, steps)
        payload: dict[str, Any] = load(
            "bitbucket", "repo_commit_status_updated__failed_on_bot_branch"
        )
        payload["actor"] = api.user(api.add_user("alice"))
        payload["repository"].update(full_name=bitbucket_flow.REPO, name="widgets")
        status = payload["commit_status"]
        self.names[name] = f"Pipeline #{run.build_number} for {branch}"
        status.update(
            key=f"pipelines-{run.build_number}",
            name=self.names[name],
            refname=branch,
            url=f"{api.url}/{bitbucket_flow.REPO}/pipelines/results/{run.build_number}",
        )
        status["links"]["commit"]["href"] = (
            f"{api.api_url}/repositories/{bitbucket_flow.REPO}/commit/{sha}"
        )
        return bitbucket_flow.delivery(payload, "repo:commit_status_updated")

    def assert_read_as_documented(self, prompt: str) -> None:
        api = self.forge.api
        assert bitbucket_flow.BOT_TOKEN not in prompt  # the log's secrets are redacted
        # The first run's failed step only (the second failure reads nothing); its log read
        # from storage without the token.
        failed = next(s for s in api.pipelines[0].steps if s.result == "FAILED")
        logs = api.calls(bitbucket_flow.STEP_LOG)
        assert [unquote(r.path.split("/")[-2]) for r in logs] == [failed.uuid]
        assert api.log_downloads and all("authorization" not in h for h in api.log_downloads)
        problems = [
            problem
            for r in api.requests
            for problem in bitbucket_conformance.request_problems(
                r.method, r.path, list(r.query), r.body
            )
        ]
        assert problems == []


def ci_of(forge: Forge) -> CI:
    if isinstance(forge, GitHubForge):
        return GitHubChecks(forge)
    if isinstance(forge, BitbucketForge):
        return BitbucketPipelines(forge)
    assert isinstance(forge, GitLabForge)
    return GitLabPipelines(forge)


def opted_in(forge: Forge) -> tuple[CI, Path]:
    """The repository opted in to CI fixes (one attempt per commit), and its failed job's long
    log: its CI and its bare repository."""
    bare = forge.widgets({**REPO_FILES, ".resolver/config.yml": CONFIG})
    ci = ci_of(forge)
    ci.record_logs()
    return ci, bare


@pytest.mark.parametrize("forge", [*FORGES, "bitbucket"], indirect=True)
def test_a_failure_on_the_bots_pull_makes_one_fix_job_with_its_log_and_the_bound_holds(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    ci, bare = opted_in(forge)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(fix_script()))
        forge.start(stack)
        forge.mention_on_issue(stack, monkeypatch, "@resolver please fix add()")
        number, branch = forge.only_pull()
        sha = branch_head(bare, branch)
        assert sha is not None
        stack.llm.set_script(by_step([finish("could_not", "Tried: read the failing test.")]))
        before = len(stack.llm.requests)
        red = ci.failed(number, branch, sha, "test")
        fix = stack.job(ended(deliver(stack, monkeypatch, red)))
        prompt = json.dumps(stack.llm.requests[before:])
        asked = len(stack.llm.requests)
        # Another failure on the same head commit: max_attempts (1) is used up.
        again = ci.failed(number, branch, sha, "lint")
        second = stack.job(ended(deliver(stack, monkeypatch, again)))

    assert fix.outcome == "could_not", fix.error
    assert fix.result.get("ci") is None  # the failure lives in the trigger, not the result
    check = failed_check_in(read_trigger(fix.trigger))
    shown = ci.check_name("test")
    assert check is not None and check.name == shown and fix.requester == "alice"
    assert fix.branch == branch
    assert LOG_END in prompt
    assert "noise 0\\n" not in prompt  # only the tail of the log, within its budget
    assert "the start of the log is cut" in prompt
    found = rf"<<<USER-TEXT \w+ comment by CI check {re.escape(shown)} \(end of its log\)>>>"
    assert re.search(found, prompt)
    ci.assert_read_as_documented(prompt)
    [status] = forge.said_on_pull(number)
    assert f"failing check `{shown}`" in status and "attempt 1 of 1" in status
    assert "Tried: read the failing test." in status
    # The second failure ran no agent and said nothing.
    assert (second.outcome, second.result.get("quiet")) == ("no_changes", True)
    assert len(stack.llm.requests) == asked
    assert len(forge.said_on_pull(number)) == 1


@pytest.mark.parametrize("forge", ["github"], indirect=True)
def test_a_persons_push_stops_the_loop(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    ci, bare = opted_in(forge)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(fix_script()))
        forge.start(stack)
        forge.mention_on_issue(stack, monkeypatch, "@resolver please fix add()")
        number, branch = forge.only_pull()
        sha = push_as_person(bare, branch, tmp_path / "dave")
        before = len(stack.llm.requests)
        red = ci.failed(number, branch, sha, "test")
        job = stack.job(ended(deliver(stack, monkeypatch, red)))

    assert job.outcome == "refused"
    assert len(stack.llm.requests) == before  # no agent ran
    [status] = forge.said_on_pull(number)
    assert "Someone else pushed" in status and "`test`" in status
    assert branch_head(bare, branch) == sha  # nothing pushed over the person's commit


def push_as_person(bare: Path, branch: str, work: Path) -> str:
    """dave commits to the bot's branch and pushes; the new head."""
    run_git("clone", "--quiet", "--branch", branch, str(bare), str(work))
    (work / "NOTES.md").write_text("dave was here\n")
    who = ["-c", "user.name=dave", "-c", "user.email=dave@example.com"]
    run_git("-C", str(work), "add", "NOTES.md")
    run_git("-C", str(work), *who, "commit", "--quiet", "-m", "dave's change")
    run_git("-C", str(work), "push", "--quiet", "origin", branch)
    head = branch_head(bare, branch)
    assert head is not None
    return head
