"""GitHub end to end under faults: a killed worker (mid-job, or after pushing onto its pull
request), a killed sandbox, an emptied Redis, a failing API, a sandbox out of memory, and
duplicate deliveries. Each ends with one status comment and at most one PR."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import redis

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI, Pull
from integrations.standin.git_http import GitHttpServer, branch_head, create_bare_repo, run_git
from resolver.contract.results import read_result
from resolver.store.models import Job
from tests.conftest import TEST_REDIS, ResolverEnv
from tests.e2e.github_flow import (
    ALICE_ID,
    DOCSTRING,
    document_script,
    fixed_in_a_pull,
    github_settings,
    issue_comment,
    widgets,
)
from tests.e2e.stack import Stack, by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.support.llm_server import Reply, finish

pytestmark = pytest.mark.timeout(420)
PULLS = "POST /repos/{owner}/{repo}/pulls"
REACTIONS = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"


def bot_comments(api: GitHubAPI, number: int | None = None) -> list[str]:
    return [
        c.body for c in api.comments.values() if c.login == BOT_LOGIN and number in (None, c.number)
    ]


def test_a_worker_killed_mid_job_retries_with_one_status_and_one_pull(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    settings = {**github_settings(github_api, key_file), "RESOLVER_SANDBOX_REAP_INTERVAL": "5"}
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(fix_script(), delay=1.0))
        doomed = stack.start_worker("doomed")
        stack.start_beat()
        client = ingress(stack, monkeypatch)
        payload = issue_comment(github_api, git_server, "@resolver please fix add()")
        job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
        stack.wait(lambda: len(stack.llm.requests) >= 2, 120, "the agent to be working")
        stack.wait(lambda: len(bot_comments(github_api)) == 1, 60, "the status comment")
        stack.kill(doomed)  # SIGKILL to the whole process group, mid-job
        stack.llm.set_script(by_step(fix_script()))  # the retry runs unslowed
        orphaned = {info.container_id for info in stack.sandboxes()}
        assert orphaned, "the killed worker's sandbox"
        stack.start_worker("standby")
        job = stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)
        # The reaper (every 5 s here) removed the dead worker's sandbox once its lease moved on.
        stack.wait(lambda: not orphaned & stack.sandbox_ids(), 30, "the orphan to be reaped")

    assert (job.state, job.outcome, job.attempts) == ("succeeded", "changed_code", 2), job.error
    [pull] = github_api.pulls
    assert pull.head == job.branch
    [status] = bot_comments(github_api)
    assert "Done" in status and str(job.pr_url) in status
    log = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{job.branch}")
    assert len(log.splitlines()) == 1  # the retry replaced its own first push


def hold_next_push(bare: Path, marks: Path) -> tuple[Path, Path]:
    """The repository's next push moves its branch, then hangs (a post-receive hook) until the
    test creates the second path; the first appears when it hangs. A worker killed meanwhile
    has pushed and recorded nothing."""
    marks.mkdir()
    held, released = marks / "held", marks / "released"
    hook = bare / "hooks" / "post-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        f"[ -e '{held}' ] && exit 0\n"
        f": > '{held}'\n"
        f"for _ in $(seq 1200); do [ -e '{released}' ] && exit 0; sleep 0.1; done\n"
    )
    hook.chmod(0o755)
    return held, released


def killed_after_pushing_to_its_pull(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    bare: Path,
    retry: list[Reply],
) -> tuple[Job, Pull, str]:
    """The bot's pull request (one fixing commit), then a follow-up on it whose worker is killed
    once its push has moved the branch and before it records the job; the retry's model answers
    with `retry`. The job as it ended, the pull request, and its head before the follow-up."""
    _, pull = fixed_in_a_pull(stack, monkeypatch, github_api, git_server)
    [doomed] = stack.procs
    before = branch_head(bare, pull.head)
    assert before is not None
    held, released = hold_next_push(bare, stack.tmp / "hook")
    stack.start_beat()
    stack.llm.set_script(by_step(document_script()))
    client = ingress(stack, monkeypatch)
    again = issue_comment(
        github_api,
        git_server,
        "@resolver also document add()",
        number=pull.number,
        pull_request=True,
    )
    job_id = int(post(client, github("issue_comment.created", again)).json()["job_id"])
    stack.wait(held.exists, 180, "the follow-up's push")
    assert branch_head(bare, pull.head) != before  # the first attempt's commit is on the pull
    stack.kill(doomed)
    released.touch()
    stack.llm.set_script(by_step(retry))
    stack.start_worker("standby")
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return stack.job(job_id), pull, before


def test_a_follow_up_killed_after_its_push_retries_from_the_pulls_head(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    """The retry takes the first attempt's push back (the pull's head had not moved since) and
    does the work once: one commit on the pull request's old head, named in the result."""
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        job, pull, before = killed_after_pushing_to_its_pull(
            stack, monkeypatch, github_api, git_server, bare, document_script()
        )

    assert (job.state, job.outcome, job.attempts) == ("succeeded", "changed_code", 2), job.error
    head = branch_head(bare, pull.head)
    assert run_git("--git-dir", str(bare), "rev-parse", f"{pull.head}^").strip() == before
    assert run_git("--git-dir", str(bare), "show", f"{pull.head}:calc.py").count(DOCSTRING) == 1
    assert read_result(job.result).pushed_sha == head
    assert "(+2 -1)" in github_api.pulls[0].body  # the description says what the branch holds
    [status] = bot_comments(github_api, pull.number)
    assert "Updated the draft pull request" in status


def test_a_follow_up_killed_after_its_push_and_answered_on_retry_leaves_the_pull_as_it_was(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    """A retry that changes nothing leaves no commit of the first attempt on the pull request
    (its description never spoke of it), and its result names no pushed commit."""
    _, bare = widgets(github_api, git_server)
    answer = [finish("answered", "add() is documented well enough.")]
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        job, pull, before = killed_after_pushing_to_its_pull(
            stack, monkeypatch, github_api, git_server, bare, answer
        )

    assert (job.state, job.outcome, job.attempts) == ("succeeded", "answered", 2), job.error
    assert branch_head(bare, pull.head) == before
    assert read_result(job.result).pushed_sha is None
    [status] = bot_comments(github_api, pull.number)
    assert "documented well enough" in status


def kill_sandbox_mid_job(
    stack: Stack, github_api: GitHubAPI, git_server: GitHttpServer, monkeypatch: pytest.MonkeyPatch
) -> int:
    """Start a job, and `docker kill` its sandbox while the agent works (as an engine restart
    or the host's OOM killer would); the job's id."""
    stack.link("alice", "github", str(ALICE_ID), "alice")
    stack.llm.set_script(by_step(fix_script(), delay=1.0))
    stack.start_worker()
    stack.start_beat()
    client = ingress(stack, monkeypatch)
    payload = issue_comment(github_api, git_server, "@resolver please fix add()")
    job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
    stack.wait(lambda: len(stack.llm.requests) >= 2, 120, "the agent to be working")
    stack.wait(lambda: len(bot_comments(github_api)) == 1, 60, "the status comment")
    stack.llm.set_script(by_step(fix_script()))  # a retry runs unslowed
    [box] = [i for i in stack.sandboxes() if i.job_id == str(job_id) and i.state == "running"]
    subprocess.run(["docker", "kill", box.container_id], check=True, capture_output=True)
    return job_id


def test_a_sandbox_killed_mid_job_runs_the_job_again_with_one_status_and_one_pull(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        job_id = kill_sandbox_mid_job(stack, github_api, git_server, monkeypatch)
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert (job.state, job.outcome, job.attempts) == ("succeeded", "changed_code", 2), job.error
    [pull] = github_api.pulls
    assert pull.head == job.branch
    [status] = bot_comments(github_api)  # edited by each attempt, never posted again
    assert "Done" in status and str(job.pr_url) in status
    log = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{job.branch}")
    assert len(log.splitlines()) == 1


def test_a_sandbox_killed_on_the_last_attempt_fails_the_job_saying_so(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    settings = {**github_settings(github_api, key_file), "RESOLVER_JOB_MAX_ATTEMPTS": "1"}
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        job_id = kill_sandbox_mid_job(stack, github_api, git_server, monkeypatch)
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert (job.state, job.outcome, job.attempts) == ("failed", "error", 1)
    assert "The sandbox kept dying under this job (1 attempt;" in (job.error or "")
    assert "its container exited with code 137" in (job.error or "")
    [status] = bot_comments(github_api)
    assert "Failed" in status and "sandbox kept dying" in status
    assert github_api.pulls == []


def test_jobs_queued_when_redis_is_emptied_come_back_through_the_reconciler(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    # The eyes' callback message is lost too; repaired after 10 s here, not the production 60 s.
    settings = {**github_settings(github_api, key_file), "RESOLVER_CALLBACK_STALL_SECONDS": "10"}
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(fix_script()))
        client = ingress(stack, monkeypatch)
        payload = issue_comment(github_api, git_server, "@resolver please fix add()")
        job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
        redis.Redis.from_url(TEST_REDIS).flushdb()  # Redis came back empty: the messages are gone
        stack.start_beat()
        stack.start_worker()
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert (job.state, job.outcome, job.attempts) == ("succeeded", "changed_code", 1)
    assert len(github_api.pulls) == 1


def test_a_failing_api_is_retried_on_5xx_not_on_4xx_and_a_lost_answer_is_not_posted_twice(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    github_api.fail(PULLS, 502)
    github_api.fail(REACTIONS, 403)
    github_api.fail(COMMENTS, 502, applied=True)  # the status comment is made, its answer lost
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(fix_script()))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        delivery = github(
            "issue_comment.created",
            issue_comment(github_api, git_server, "@resolver please fix add()"),
        )
        first = post(client, delivery)
        again = post(client, delivery)  # GitHub redelivers: the same delivery id
        job_id = int(first.json()["job_id"])
        assert (first.status_code, again.status_code) == (202, 200)
        assert again.json()["job_id"] == job_id
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)
        callbacks = {c.action: c for c in stack.callbacks(job_id)}
        pull_tries = [a.outcome for a in stack.attempts(callbacks["open_pull"].id)]
        react_tries = [a.outcome for a in stack.attempts(callbacks["react"].id)]
        status_tries = [
            a.outcome
            for c in stack.callbacks(job_id)
            if c.action == "status"
            for a in stack.attempts(c.id)
        ]

    [status] = bot_comments(github_api)
    assert "Done" in status and str(job.pr_url) in status
    assert len(github_api.calls(COMMENTS)) == 1 and "transient" in status_tries
    assert pull_tries == ["transient", "ok"]
    assert react_tries == ["permanent"] and callbacks["react"].state == "failed"
    assert len(github_api.pulls) == 1 and job.pr_url
    assert len(github_api.calls(PULLS)) == 2


def test_a_setup_out_of_memory_fails_the_job_with_a_clear_message(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    files = {
        "README.md": "# hungry\n",
        ".resolver/setup.sh": "python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'\n",
    }
    bare = create_bare_repo(git_server.root, "octo/widgets", files)
    github_api.add_repo(
        "octo/widgets",
        git_server.url_for("octo/widgets"),
        collaborators={"alice": "write"},
        bare=bare,
    )
    # The container's limit is the memory plus the workspace (tmpfs) on top: both small here.
    small = {"RESOLVER_SANDBOX_MEMORY": "64m", "RESOLVER_SANDBOX_WORKSPACE_SIZE": "32m"}
    settings = {**github_settings(github_api, key_file), **small}
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        payload = issue_comment(github_api, git_server, "@resolver please fix add()")
        job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert job.state == "failed" and "ran out of memory" in (job.error or "")
    assert stack.llm.requests == []
    [status] = bot_comments(github_api)
    assert "Failed" in status and "ran out of memory" in status
    assert github_api.pulls == []
