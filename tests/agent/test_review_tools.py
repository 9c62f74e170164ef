"""A reviewer's tools: `comment` records its checked arguments for the host to read back,
`finish` takes a verdict (never an approval), and the other tools work as for any job."""

from __future__ import annotations

import json
from pathlib import Path

from resolver.agent.review_tools import REVIEW_TOOLS, ReviewToolRunner
from tests.agent.test_tools import DirFiles


def _runner(tmp_path: Path) -> ReviewToolRunner:
    return ReviewToolRunner(DirFiles(tmp_path), 10_000, 10.0)


def test_a_comment_is_recorded_with_its_place_for_the_host(tmp_path: Path) -> None:
    args = {"path": "a.py", "line": 3, "body": "off by one", "suggestion": "x = 2"}
    seen = _runner(tmp_path).run("comment", json.dumps(args), 60)
    assert not seen.error and seen.finish is None
    assert seen.details["review_comment"] == {**args, "side": "RIGHT"}


def test_a_bad_comment_is_an_error_the_model_can_read(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    assert runner.run("comment", json.dumps({"path": "a.py", "body": "x"}), 60).error
    assert runner.run("comment", json.dumps({"path": "a.py", "line": 0, "body": "x"}), 60).error
    bad_side = {"path": "a.py", "line": 1, "body": "x", "side": "MIDDLE"}
    assert "side must be one of" in runner.run("comment", json.dumps(bad_side), 60).content


def test_finish_takes_a_verdict_and_cannot_approve(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    done = runner.run("finish", json.dumps({"verdict": "request_changes", "summary": "No."}), 60)
    assert done.finish is not None and (done.finish.outcome, done.finish.summary) == (
        "answered",
        "No.",
    )
    assert done.details == {"verdict": "request_changes"}
    approve = runner.run("finish", json.dumps({"verdict": "approve", "summary": "LGTM"}), 60)
    assert approve.error and approve.finish is None
    [schema] = [t for t in REVIEW_TOOLS if t["function"]["name"] == "finish"]
    assert schema["function"]["parameters"]["properties"]["verdict"]["enum"] == [
        "comment",
        "request_changes",
    ]


def test_the_shell_works_as_for_any_job(tmp_path: Path) -> None:
    seen = _runner(tmp_path).run("execute_bash", json.dumps({"command": "echo hi"}), 60)
    assert "hi" in seen.content
