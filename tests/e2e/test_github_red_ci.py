"""GitHub end to end: a red check on the bot's own pull request makes one fix job whose prompt
holds the check's annotations and the end of its log; the attempt bound and a person's push
stop the loop (issue 22, item 3)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from resolver.contract.triggers import failed_check_in, read_trigger
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment
from tests.e2e.stack import REPO_FILES, Stack, by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import github, load, post
from tests.integrations.github.conftest import INSTALLATION_ID, REPO
from tests.support.git_http import GitHttpServer, branch_head, create_bare_repo, run_git
from tests.support.github_api import BOT_LOGIN, GitHubAPI, Pull, conformance_problems
from tests.support.llm_server import finish

pytestmark = pytest.mark.timeout(420)

CHECK_ID = 24187639152
LOG_END = "FAILED test_calc.py::AddTest::test_add - AssertionError: -1 != 5 (LOG-END-MARKER)"
ANNOTATION = "AssertionError: -1 != 5 (ANNOTATION-MARKER)"
CONFIG = "ci:\n  fix: true\n  max_attempts: 1\n"


def red_check(
    api: GitHubAPI, git: GitHttpServer, pull: Pull, sha: str, name: str
) -> dict[str, Any]:
    """The recorded failing check_run.completed, on the stand-in's repository and pull request."""
    payload = load("github", "check_run.completed__failure_on_bot_branch")
    run = payload["check_run"]
    run.update(id=CHECK_ID, name=name, head_sha=sha)
    for entry in run["pull_requests"]:
        entry.update(number=pull.number)
        entry["head"].update(ref=pull.head, sha=sha)
    payload["repository"].update(
        full_name=REPO, name=REPO.split("/")[1], clone_url=git.url_for(REPO), default_branch="main"
    )
    payload["installation"] = {"id": INSTALLATION_ID}
    return payload


def opened_pull(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, api: GitHubAPI, git: GitHttpServer
) -> Pull:
    """alice asks on issue 7; the bot fixes add() and opens its draft pull request."""
    stack.link("alice", "github", str(ALICE_ID), "alice")
    stack.llm.set_script(by_step(fix_script()))
    stack.start_worker()
    client = ingress(stack, monkeypatch)
    asked = issue_comment(api, git, "@resolver please fix add()")
    job_id = int(post(client, github("issue_comment.created", asked)).json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    [pull] = api.pulls
    return pull


def with_config(api: GitHubAPI, git: GitHttpServer) -> Path:
    bare = create_bare_repo(git.root, REPO, {**REPO_FILES, ".resolver/config.yml": CONFIG})
    api.add_repo(REPO, git.url_for(REPO), collaborators={"alice": "write"}, bare=bare)
    api.checks.annotations[CHECK_ID] = [
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
    api.checks.logs[CHECK_ID] = "".join(f"2026-01-01T00:00:00Z noise {n}\n" for n in range(3000))
    api.checks.logs[CHECK_ID] += LOG_END + "\n"
    return bare


def prompts_since(stack: Stack, start: int) -> str:
    return json.dumps(stack.llm.requests[start:])


def bot_comments(api: GitHubAPI, number: int) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number]


def test_a_red_check_makes_one_fix_job_with_its_logs_and_the_bound_holds(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    bare = with_config(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        pull = opened_pull(stack, monkeypatch, github_api, git_server)
        sha = branch_head(bare, pull.head)
        assert sha is not None
        stack.llm.set_script(by_step([finish("could_not", "Tried: read the failing test.")]))
        before = len(stack.llm.requests)
        client = ingress(stack, monkeypatch)
        red = red_check(github_api, git_server, pull, sha, "test")
        answer = post(client, github("check_run.completed", red))
        assert answer.status_code == 202, answer.text
        fix = stack.wait_finished(int(answer.json()["job_id"]))
        stack.wait_callbacks_settled()
        prompt = prompts_since(stack, before)
        asked = len(stack.llm.requests)

        # Another check fails on the same head commit: max_attempts (1) is used up.
        again = post(
            client,
            github("check_run.completed", red_check(github_api, git_server, pull, sha, "lint")),
        )
        assert again.status_code == 202, again.text
        second = stack.wait_finished(int(again.json()["job_id"]))
        stack.wait_callbacks_settled()

    assert fix.outcome == "could_not", fix.error
    assert fix.result.get("ci") is None  # the check lives in the trigger, not the result
    check = failed_check_in(read_trigger(fix.trigger))
    assert check is not None and check.name == "test"
    assert fix.requester == "alice"
    assert LOG_END in prompt and ANNOTATION in prompt
    assert "noise 0\\n" not in prompt  # only the tail of the log, within its budget
    assert "the start of the log is cut" in prompt
    assert re.search(r"<<<USER-TEXT \w+ comment by CI check test \(end of its log\)>>>", prompt)
    # The download URL got no token; every API call is one GitHub documents.
    assert github_api.checks.downloads
    assert all("authorization" not in headers for headers in github_api.checks.downloads)
    assert conformance_problems(github_api.requests) == []
    [status] = [c for c in bot_comments(github_api, pull.number)]
    assert "failing check `test`" in status and "attempt 1 of 1" in status
    assert "Tried: read the failing test." in status
    # The second red check ran no agent and said nothing.
    assert (second.outcome, second.result.get("quiet")) == ("no_changes", True)
    assert len(stack.llm.requests) == asked
    assert len(bot_comments(github_api, pull.number)) == 1


def test_a_persons_push_stops_the_loop(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    bare = with_config(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        pull = opened_pull(stack, monkeypatch, github_api, git_server)
        sha = push_as_person(bare, pull.head, tmp_path / "dave")
        before = len(stack.llm.requests)
        client = ingress(stack, monkeypatch)
        answer = post(
            client,
            github("check_run.completed", red_check(github_api, git_server, pull, sha, "test")),
        )
        assert answer.status_code == 202, answer.text
        job = stack.wait_finished(int(answer.json()["job_id"]))
        stack.wait_callbacks_settled()

    assert job.outcome == "refused"
    assert len(stack.llm.requests) == before  # no agent ran
    [status] = bot_comments(github_api, pull.number)
    assert "Someone else pushed" in status and "`test`" in status
    assert branch_head(bare, pull.head) == sha  # nothing pushed over the person's commit


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
