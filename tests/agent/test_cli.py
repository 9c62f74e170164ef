"""`resolver run`: the headless entry point prints the trajectory, diff, cost and outcome."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from resolver.cli import app
from tests.support.llm_server import ScriptedLLMServer, finish, tool

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image", "agent_env")]


@pytest.fixture(autouse=True)
def keep_log_handlers() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers, root.level = handlers, level


def jobs_in_db() -> list[dict[str, object]]:
    from sqlalchemy import select

    from resolver.store import jobs
    from resolver.store.db import session_scope
    from resolver.store.models import Job

    with session_scope() as session:
        return [jobs.job_to_dict(j) for j in session.scalars(select(Job))]


def test_run_prints_trajectory_diff_cost_and_outcome(
    source_repo: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(
        tool(
            "str_replace_editor",
            command="str_replace",
            path="calc.py",
            old_str="return a + b",
            new_str="return b + a",
        ),
        tool("execute_bash", command="python3 -c 'import calc; print(calc.add(2, 3))'"),
        finish("changed_code", "Swapped the operands."),
    )
    result = CliRunner().invoke(app, ["run", "--repo", str(source_repo), "--task", "swap them"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "[step 1] edit str_replace calc.py" in out
    assert "$ python3 -c 'import calc; print(calc.add(2, 3))'" in out
    assert "-    return a + b\n+    return b + a" in out
    assert "== cost\n$0.4200 (300 prompt + 60 completion tokens)" in out
    assert "== outcome\nsucceeded / changed_code\nSwapped the operands." in out
    [job] = jobs_in_db()
    assert (job["source"], job["state"], job["outcome"]) == ("cli", "succeeded", "changed_code")
    assert job["cost_usd"] == pytest.approx(0.42)


def test_run_reports_a_stop_and_fails(source_repo: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.set_script(lambda _request: tool("execute_bash", command="ls"))
    result = CliRunner().invoke(app, ["run", "--repo", str(source_repo), "--task", "loop"])
    assert result.exit_code == 1
    assert "stopped (stuck: same action and observation 4 times)" in result.output
    assert "(no changes)" in result.output
    [job] = jobs_in_db()
    assert (job["state"], job["outcome"]) == ("failed", "error")
    assert "going in circles" in str(job["error"])


def test_run_explains_a_missing_repository(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--repo", str(tmp_path / "nope"), "--task", "x"])
    assert result.exit_code == 1
    assert "git clone failed" in result.output
    [job] = jobs_in_db()
    assert job["state"] == "failed"
