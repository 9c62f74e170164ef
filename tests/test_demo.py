"""`make demo`'s main job, run as a test: webhook → worker → sandbox → agent → branch → PR."""

import subprocess
import sys

import pytest

from tests.support.procs import ROOT


@pytest.mark.docker
def test_the_demo_pushes_a_branch_with_the_fix(resolver_env) -> None:
    demo_dir = resolver_env.tmp / "demo"
    env = resolver_env.child_env(RESOLVER_DEMO_DIR=str(demo_dir), PYTHONPATH=str(ROOT))
    env.pop("RESOLVER_LLM_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "demo"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "-> 202" in done.stdout
    assert "outcome=changed_code" in done.stdout
    assert "draft pull request #1" in done.stdout and "Fixes #1" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].endswith("/acme/calc/pull/1\x1b[0m")
    assert "**Done**" in done.stdout and "['eyes']" in done.stdout
    diff = subprocess.run(
        ["git", "diff", "main", "resolver/1-add-subtracts-instead-of-adding"],
        cwd=demo_dir / "git/acme/calc.git",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-    return a - b" in diff and "+    return a + b" in diff
    log = subprocess.run(
        ["git", "log", "-1", "--format=%an%n%B", "resolver/1-add-subtracts-instead-of-adding"],
        cwd=demo_dir / "git/acme/calc.git",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert log.startswith("resolver\n")
    assert "Co-authored-by: Codertocat" in log
