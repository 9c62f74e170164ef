"""GitHub end to end: the pull request proves its work. Its Verification block is what the
host saw the scripted commands exit with; a follow-up rewrites it; instruction files from the
default branch reach the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment
from tests.e2e.stack import REPO_FILES, SUMMARY, Stack, by_step, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import Reply, finish, tool

pytestmark = pytest.mark.timeout(420)

TESTS = "python3 -m unittest -q"
AGENTS = "Run the tests with `python3 -m unittest` before you finish.\n"
FIX = tool(
    "str_replace_editor",
    command="str_replace",
    path="calc.py",
    old_str="    return a - b\n",
    new_str="    return a + b\n",
)
UPDATE_PULL = "PATCH /repos/{owner}/{repo}/pulls/{pull_number}"


def repository(api: GitHubAPI, git: GitHttpServer) -> None:
    """`octo/widgets` with a broken add(), its test and an AGENTS.md; alice may write."""
    bare = create_bare_repo(git.root, REPO, {**REPO_FILES, "AGENTS.md": AGENTS})
    api.add_repo(REPO, git.url_for(REPO), collaborators={"alice": "write"}, bare=bare)


def status_comment(api: GitHubAPI, number: int = 7) -> str:
    [status] = [
        c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number
    ]
    return status


def run_job(
    stack: Stack,
    client: TestClient,
    api: GitHubAPI,
    git: GitHttpServer,
    text: str,
    *,
    number: int = 7,
    pull_request: bool = False,
) -> int:
    payload = issue_comment(api, git, text, number=number, pull_request=pull_request)
    job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled()
    return job_id


def test_the_pull_request_shows_the_commands_as_they_exited(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    repository(github_api, git_server)
    script: list[Reply] = [
        tool("execute_bash", command=TESTS),  # fails: add() subtracts
        FIX,
        tool("execute_bash", command=TESTS),  # passes
        finish("changed_code", SUMMARY),
    ]
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(script))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        job_id = run_job(stack, client, github_api, git_server, "@resolver fix add()")
        job = stack.job(job_id)
        system = stack.llm.requests[0]["messages"][0]["content"]

    assert job.outcome == "changed_code", job.error
    [pull] = github_api.pulls
    assert f"- ✅ `{TESTS}` · test · exit 0 (2 runs)" in pull.body
    assert "- ⚠️ **No lint ran.**" in pull.body
    assert "1 file changed (+1 -1):" in pull.body and "- `calc.py` (+1 -1)" in pull.body
    assert SUMMARY in pull.body and "Fixes #7" in pull.body
    status = status_comment(github_api)
    assert f"Verified: `{TESTS}` passed (2 runs); no lint ran." in status
    # The repository's AGENTS.md, from the default branch, fenced in the system prompt.
    assert "Repository instructions, from AGENTS.md on the default branch" in system
    assert AGENTS.strip() in system
    assert job.result["verification"]["checks"][0]["runs"] == 2


def test_a_change_nobody_tested_says_so(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    repository(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        # The model claims a test run it never made: only the host's record counts.
        stack.llm.set_script(by_step([FIX, finish("changed_code", "Fixed; all tests pass.")]))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        run_job(stack, client, github_api, git_server, "@resolver fix add()")

    [pull] = github_api.pulls
    assert "### Verification" in pull.body
    assert "- ⚠️ **No tests or lint ran.**" in pull.body and "✅" not in pull.body
    assert "Not verified: no tests or lint ran." in status_comment(github_api)


def test_a_follow_up_rewrites_the_block(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    repository(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step([FIX, finish("changed_code", SUMMARY)]))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        run_job(stack, client, github_api, git_server, "@resolver fix add()")
        [pull] = github_api.pulls
        assert "No tests or lint ran." in pull.body

        stack.llm.set_script(
            by_step(
                [
                    tool("execute_bash", command=f"echo '# tested' >> calc.py && {TESTS}"),
                    finish("changed_code", "Tested add()."),
                ]
            )
        )
        second = run_job(
            stack,
            client,
            github_api,
            git_server,
            "@resolver run the tests",
            number=pull.number,
            pull_request=True,
        )

    assert len(github_api.pulls) == 1
    assert len(github_api.calls(UPDATE_PULL)) == 1
    assert f"Updated by Resolver for [job {second}]" in pull.body
    assert f"- ✅ `echo '# tested' >> calc.py && {TESTS}` · test · exit 0 (1 run)" in pull.body
    assert "No tests" not in pull.body and "**No lint ran.**" in pull.body
    # The whole branch against main: both jobs' lines in calc.py.
    assert "- `calc.py` (+2 -1)" in pull.body and "Tested add()." in pull.body
