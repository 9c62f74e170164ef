"""A prompt-injected agent plants every vector, then does ordinary work. Through the whole
webhook flow and through `resolver run`, nothing of it reaches the host: no marker file, no
request to the listener, no other repository moved, no host file published."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import github_settings, mention_and_finish, widgets
from tests.e2e.stack import SUMMARY, running_stack
from tests.security.conftest import SECRET_LINE, Listener, make_targets
from tests.security.vectors import Targets, background_writer, plants
from tests.support.llm_server import Reply, ScriptedLLMServer, finish, tool

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]
PLANTED = "every-vector-planted"


def hostile_script(targets: Targets, summary: str = SUMMARY) -> list[Reply]:
    """Plant everything (and a writer that keeps going after `finish`), then fix add()."""
    planting = " && ".join(plants(targets).values())
    identity = "git config user.name a && git config user.email a@b"
    return [
        tool("execute_bash", command=f"{identity} && {planting} && echo {PLANTED}"),
        tool("execute_bash", command=background_writer(targets)),
        tool(
            "str_replace_editor",
            command="str_replace",
            path="calc.py",
            old_str="    return a - b\n",
            new_str="    return a + b\n",
        ),
        # The agent's own git runs its own hooks, in the sandbox only.
        tool("execute_bash", command="git add -A && git commit -qm mine; git status --short"),
        finish("changed_code", summary),
    ]


def assert_contained(targets: Targets, listener: Listener, llm: ScriptedLLMServer) -> None:
    # Every vector was in place: the planting step reported back to the model.
    seen = [str(request["messages"]) for request in llm.requests]
    assert any(PLANTED in text for text in seen), seen[1][-3000:] if len(seen) > 1 else seen
    assert sorted(path.name for path in targets.marks.iterdir()) == []
    assert listener.requests == []


def test_the_webhook_flow_contains_every_vector(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
    listener: Listener,
) -> None:
    _, bare = widgets(github_api, git_server)
    other = create_bare_repo(git_server.root, "octo/secrets", {"key.pem": "private\n"})
    github_api.add_repo("octo/secrets", git_server.url_for("octo/secrets"), bare=other)
    targets = make_targets(
        tmp_path, listener, git_server.url_for("octo/secrets"), other / "objects"
    )
    settings = github_settings(github_api, key_file)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.llm.push(*hostile_script(targets))
        job = mention_and_finish(stack, monkeypatch, github_api, git_server)
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert_contained(targets, listener, stack.llm)
    # The branch holds the fix and nothing else; only the job's repository moved.
    changed = run_git("--git-dir", str(bare), "diff", "--name-only", "main", job.branch)
    assert changed.split() == ["calc.py"]
    assert run_git("--git-dir", str(other), "for-each-ref", "--format=%(refname)").split() == [
        "refs/heads/main"
    ]
    # The job says what happened: the writer was stopped before the work was read.
    notes = " ".join(job.result.get("notes", []))
    assert "process(es) running; they were stopped" in notes
    [status] = [c.body for c in github_api.comments.values() if c.login == BOT_LOGIN]
    assert "process(es) running; they were stopped" in status
    published = [c.body for c in github_api.comments.values()] + [p.body for p in github_api.pulls]
    for text in [*published, logs, str(job.result)]:
        assert SECRET_LINE not in text


def test_resolver_run_contains_every_vector(
    agent_env: object,
    sandbox_image: str,
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    listener: Listener,
) -> None:
    from resolver.cli import app
    from tests.agent.conftest import make_repo

    source = make_repo(tmp_path / "source", {"calc.py": "def add(a, b):\n    return a - b\n"})
    other = create_bare_repo(tmp_path / "other", "octo/secrets", {"key.pem": "private\n"})
    targets = make_targets(tmp_path, listener, str(other), other / "objects")
    before = run_git("-C", str(source), "for-each-ref")
    llm_server.push(*hostile_script(targets))
    result = CliRunner().invoke(app, ["run", "--repo", str(source), "--task", "fix add()"])

    assert result.exit_code == 0, result.output
    assert "-    return a - b\n+    return a + b" in result.output
    assert "diff --git a/calc.py b/calc.py" in result.output
    assert result.output.count("diff --git") == 1
    assert SECRET_LINE not in result.output
    assert_contained(targets, listener, llm_server)
    assert run_git("-C", str(source), "for-each-ref") == before
    assert run_git("--git-dir", str(other), "for-each-ref", "--format=%(refname)").split() == [
        "refs/heads/main"
    ]


def test_a_one_gigabyte_file_fails_the_job_with_a_clear_status(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    settings = github_settings(github_api, key_file)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.llm.push(
            tool("execute_bash", command="head -c 1G /dev/zero > big.bin && ls -l big.bin"),
            finish("changed_code", "Added the data file."),
        )
        job = mention_and_finish(stack, monkeypatch, github_api, git_server, "@resolver add it")

    assert job.state == "failed"
    assert "`big.bin` is 1 GB, over the limit of 10 MB per file" in (job.error or "")
    [status] = [c.body for c in github_api.comments.values() if c.login == BOT_LOGIN]
    assert "`big.bin` is 1 GB, over the limit of 10 MB per file" in status
    assert run_git("--git-dir", str(bare), "for-each-ref", "--format=%(refname)").split() == [
        "refs/heads/main"
    ]
    assert github_api.pulls == []
