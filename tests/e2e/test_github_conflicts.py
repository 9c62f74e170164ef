"""GitHub end to end: `@bot rebase` on the bot's own pull request merges the base into its
branch. A clean merge is made by git on the host; conflicts are resolved by the (scripted)
model in the sandbox; either way the push is a fast-forward (the old head is an ancestor of the
new one). Conflicts left unresolved are reported with their files, and nothing is pushed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import IDENTITY, GitHttpServer, branch_head, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment, widgets
from tests.e2e.stack import FIXED, Stack, by_step, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import Reply, finish, tool

pytestmark = pytest.mark.timeout(420)

BRANCH = "resolver/7-add-subtracts"
MAIN_CALC = "def add(a, b):\n    return a - b  # subtracts\n"


def commit_to(bare: Path, branch: str, files: dict[str, str], message: str) -> str:
    """Commit `files` on top of `branch` of the bare repository, as a person would push it."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        run_git("clone", "--quiet", "--branch", branch, str(bare), str(work))
        for name, text in files.items():
            (work / name).write_text(text)
        run_git("add", "-A", cwd=work)
        run_git(*IDENTITY, "commit", "--quiet", "-m", message, cwd=work)
        run_git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=work)
    head = branch_head(bare, branch)
    assert head is not None
    return head


def bots_pull(api: GitHubAPI, bare: Path) -> int:
    """The bot's pull request: `BRANCH` fixes add() on top of the first commit of main."""
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    commit_to(bare, BRANCH, {"calc.py": FIXED}, "Fix add()")
    return api.add_pull(REPO, BRANCH, "main", "add() subtracts", BOT_LOGIN).number


def ask(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitHubAPI,
    git: GitHttpServer,
    number: int,
    login: str = "alice",
    user_id: int = ALICE_ID,
) -> int:
    """`@resolver rebase` on the pull request; the job id, once it and its callbacks ended."""
    client = ingress(stack, monkeypatch)
    payload = issue_comment(
        api, git, "@resolver rebase", number=number, login=login, user_id=user_id, pull_request=True
    )
    answer = post(client, github("issue_comment.created", payload))
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def bot_comments(api: GitHubAPI, number: int) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number]


def leaves_markers() -> list[Reply]:
    """The model's part: it says it resolved the conflict, yet the markers are still there."""
    return [
        tool(
            "str_replace_editor",
            command="str_replace",
            path="calc.py",
            old_str="def add(a, b):\n",
            new_str="def add(a, b):  # merged\n",
        ),
        finish("changed_code", "Resolved."),
    ]


def parents(bare: Path, commit: str) -> list[str]:
    return run_git("--git-dir", str(bare), "rev-list", "--parents", "-n", "1", commit).split()[1:]


def is_ancestor(bare: Path, older: str, newer: str) -> bool:
    done = run_git("--git-dir", str(bare), "rev-list", newer)
    return older in done.split()


def test_a_clean_update_is_merged_by_git_and_pushed_as_a_fast_forward(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    number = bots_pull(github_api, bare)
    old = branch_head(bare, BRANCH)
    main = commit_to(bare, "main", {"README.md": "# widgets\n"}, "Add a README")
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.link("dave", "github", "6001", "dave")
        stack.start_worker()
        refused = ask(
            stack, monkeypatch, github_api, git_server, number, login="dave", user_id=6001
        )
        assert branch_head(bare, BRANCH) == old  # dave may not push: nothing happened
        theirs = github_api.add_pull(REPO, "main", "main", "someone's", "alice").number
        not_mine = ask(stack, monkeypatch, github_api, git_server, theirs)
        job_id = ask(stack, monkeypatch, github_api, git_server, number)
        again = ask(stack, monkeypatch, github_api, git_server, number)
        job, refusal = stack.job(job_id), stack.job(refused)
        not_mine_job, again_job = stack.job(not_mine), stack.job(again)

    assert refusal.outcome == "refused"
    assert not_mine_job.outcome == "refused"
    assert "pull requests I opened" in (not_mine_job.error or "")
    assert (again_job.state, again_job.outcome) == ("succeeded", "no_changes")
    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    new = branch_head(bare, BRANCH)
    assert new is not None and old is not None
    assert parents(bare, new) == [old, main]
    assert is_ancestor(bare, old, new)
    assert run_git("--git-dir", str(bare), "show", f"{new}:calc.py") == FIXED
    assert run_git("--git-dir", str(bare), "show", f"{new}:README.md") == "# widgets\n"
    assert not stack.llm.requests  # git did it all: no model, no sandbox
    assert len(github_api.pulls) == 2  # the bot's and someone's; none opened
    assert "calc.py" in github_api.pulls[0].body  # the description lists the branch's files
    assert any("git found no conflicts" in body for body in bot_comments(github_api, number))
    assert branch_head(bare, BRANCH) == new  # the second ask found nothing to merge


def test_a_conflict_is_resolved_by_the_model_and_pushed_without_force(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    number = bots_pull(github_api, bare)
    old = branch_head(bare, BRANCH)
    main = commit_to(bare, "main", {"calc.py": MAIN_CALC, "NOTES.md": "notes\n"}, "Comment")
    resolved = "def add(a, b):\n    return a + b  # adds\n"
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(
            by_step(
                [
                    tool("execute_bash", command="grep -c '<<<<<<<' calc.py"),
                    tool(
                        "str_replace_editor", command="create", path="calc.py", file_text=resolved
                    ),
                    tool("execute_bash", command="python3 -m unittest -q 2>&1 | tail -n 2"),
                    finish("changed_code", "Kept the fix and main's comment."),
                ]
            )
        )
        stack.start_worker()
        job_id = ask(stack, monkeypatch, github_api, git_server, number)
        job = stack.job(job_id)
        first = stack.llm.requests[0]

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    new = branch_head(bare, BRANCH)
    assert new is not None and old is not None
    assert is_ancestor(bare, old, new)  # no force-push: the old head is in the new history
    assert parents(bare, new) == [old, main]
    assert run_git("--git-dir", str(bare), "show", f"{new}:calc.py") == resolved
    assert run_git("--git-dir", str(bare), "show", f"{new}:NOTES.md") == "notes\n"
    prompt = str(first["messages"])
    assert "calc.py" in prompt and "conflict" in prompt
    # The model saw the markers in its work tree (the grep counted one conflict).
    tool_results = [m for m in stack.llm.requests[1]["messages"] if m.get("role") == "tool"]
    assert "1" in str(tool_results[-1].get("content"))
    assert "Updated the draft pull request" in bot_comments(github_api, number)[-1]


def test_a_conflict_the_model_leaves_is_reported_with_its_files(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    number = bots_pull(github_api, bare)
    old = branch_head(bare, BRANCH)
    commit_to(bare, "main", {"calc.py": MAIN_CALC}, "Comment")
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(leaves_markers()))
        stack.start_worker()
        job_id = ask(stack, monkeypatch, github_api, git_server, number)
        job = stack.job(job_id)

    assert (job.state, job.outcome) == ("failed", "could_not")
    assert branch_head(bare, BRANCH) == old  # nothing pushed
    assert job.result["conflicts"] == ["calc.py"]
    status = bot_comments(github_api, number)[-1]
    assert "`calc.py`" in status and "not resolved" in status
