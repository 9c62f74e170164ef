"""`make demo`'s main job, run as a test: webhook → worker → sandbox → agent → branch → PR."""

import socket
import subprocess
import sys

import pytest

from tests.support.ports import free_port
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


@pytest.mark.services
def test_a_port_taken_before_the_server_binds_it_is_given_up_for_another(
    resolver_env, monkeypatch: pytest.MonkeyPatch
) -> None:
    import demo.__main__ as demo

    taken = socket.create_server(("127.0.0.1", 0))  # something took it: it never answers
    held, spare = taken.getsockname()[1], free_port()
    ports = iter([held, spare])
    monkeypatch.setattr(demo, "free_port", lambda: next(ports))
    monkeypatch.setattr(demo, "DEMO_DIR", resolver_env.tmp)
    with taken:
        server, base = demo.serve(resolver_env.child_env())
    try:
        assert base == f"http://127.0.0.1:{spare}"
    finally:
        demo.stop(server)
