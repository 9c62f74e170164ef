"""Upgrades keep every row: a database made and filled by the previous release's own code (its
tag checked out with its own venv from its own lock file) is upgraded by this code, on SQLite
and PostgreSQL, and every row reads the same through the CLI and the JSON API; a job left
running at the upgrade ends visibly. `resolver db upgrade` refuses while a worker of the
previous release is alive (the rolling upgrade is not held: CHANGELOG.md says to stop the
workers first).

The previous release's tree and venv are cached under var/upgrade/<tag>/, so a second run
takes seconds."""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.cli.test_cli_api import cli
from tests.conftest import reset_caches

ROOT = Path(__file__).resolve().parents[2]
PREVIOUS = "v0.1.0"
# The commit that tag names: a clone made without tags still has it in main's history.
PREVIOUS_COMMIT = "89a7f6725df59c7f5d37f0d6f45a214c492d1d09"
HERE = Path(__file__).resolve().parent


def previous_release(tag: str = PREVIOUS) -> Path:
    """The tag's tree with its venv synced from its own lock file, built once under var/."""
    home = ROOT / "var" / "upgrade"
    home.mkdir(parents=True, exist_ok=True)
    tree = home / tag
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one xdist worker builds, the others wait
        if (tree / ".ready").exists():
            return tree
        # uv from PATH, else the copy scripts/bootstrap installs under var/tools (as the Makefile).
        uv = shutil.which("uv") or next(
            (str(p) for p in [ROOT / "var" / "tools" / "bin" / "uv"] if p.exists()), None
        )
        if uv is None:
            pytest.fail("uv is not on PATH; `make test` (scripts/bootstrap) installs it")
        ref = _commit_of(tag)
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJ"))}
        # Not --offline: the tag's lock names versions this tree's no longer does (mcp's
        # opentelemetry-api, for one), which a fresh machine's cache does not hold. They come
        # from the package index, as scripts/bootstrap's own sync does.
        subprocess.run([uv, "sync", "--frozen", "-q"], cwd=tree, env=env, check=True)
        (tree / ".ready").touch()
    return tree


def _commit_of(tag: str) -> str:
    """The tag's commit; without the tag in this clone, the commit recorded for it."""
    for ref in (tag, PREVIOUS_COMMIT if tag == PREVIOUS else ""):
        known = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if ref and known.returncode == 0:
            return known.stdout.strip()
    pytest.fail(f"neither the tag {tag} nor its commit is in this clone: `git fetch --tags`")


def run_old(tree: Path, script: str, env: dict[str, str]) -> str:
    old_env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(tree / ".venv" / "bin" / "python"), "-W", "ignore", str(HERE / script)],
        cwd=tree, env=old_env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def run_new(script: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-W", "ignore", str(HERE / script)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextmanager
def old_worker(tree: Path, env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A worker of the previous release on the test's broker, stopped on the way out."""
    old_env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    argv = ["worker", "--queues", "default", "--concurrency", "1", "--hostname", "old@%h"]
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [str(tree / ".venv" / "bin" / "python"), "-m", "resolver.cli", *argv],
            cwd=tree, env=old_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            yield worker
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)


def refused_while_alive(worker: subprocess.Popen[bytes], env: dict[str, str], log: Path) -> None:
    """`resolver db upgrade` refuses while the old worker answers, naming it."""
    from resolver.broker.versions import worker_versions
    from resolver.core.settings import get_settings

    redis_url = get_settings().redis_url
    deadline = time.monotonic() + 90
    while not worker_versions(redis_url) and time.monotonic() < deadline:
        assert worker.poll() is None, log.read_text()
        time.sleep(0.5)
    assert list(worker_versions(redis_url).values()) == [None], "too old to say its version"
    refused = cli(env, "db", "upgrade")
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 1 and "stop the workers first: old@" in said, said
    assert "a release before 0.2.0" in said


def same(old: Any, new: Any, where: str) -> None:
    """`new` says all that `old` said (a newer release may add fields, never drop or change)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for key, value in old.items():
            assert key in new, f"{where}.{key} is gone"
            same(value, new[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), where
        for n, (a, b) in enumerate(zip(old, new, strict=True)):
            same(a, b, f"{where}[{n}]")
    else:
        assert old == new, f"{where}: {old!r} became {new!r}"


def test_the_previous_release_upgrades_with_every_row(
    resolver_env, backend, empty_database, monkeypatch
) -> None:
    tree = previous_release()
    env = resolver_env.child_env(RESOLVER_DATABASE_URL=empty_database)
    with ExitStack() as stack:
        if backend == "sqlite":  # the broker check is the same on both: once is enough
            log = resolver_env.tmp / "old-worker.log"
            worker = stack.enter_context(old_worker(tree, env, log))
        run_old(tree, "upgrade_fill.py", env)
        before = json.loads(run_old(tree, "upgrade_read.py", env))
        if backend == "sqlite":
            refused_while_alive(worker, env, log)
    assert before["counts"]["jobs"] == 5 and all(before["counts"].values()), before["counts"]

    upgraded = cli(env, "db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    after = json.loads(run_new("upgrade_read.py", env))
    kept = {table: after["counts"].get(table) for table in before["counts"]}
    assert kept == before["counts"], "every row is kept"
    added = set(after["counts"]) - set(before["counts"])
    assert all(after["counts"][table] == 0 for table in added), "a new table starts empty"
    for part in ("users", "routes", "tokens", "stored_settings"):
        assert after[part] == before[part], part
    for part in ("schedules", "jobs", "shown", "api", "api_shown"):
        same(before[part], after[part], part)

    # The job a worker of the old release was running: its lease ran out when that worker
    # stopped; the reconciler hands it to a new worker, and past its attempts fails it visibly.
    from resolver.core.settings import get_settings
    from resolver.store import slots
    from resolver.store.db import session_scope
    from resolver.store.models import Callback, Job
    from resolver.worker import watchdog

    monkeypatch.setenv("RESOLVER_DATABASE_URL", empty_database)
    reset_caches()
    [running] = [j["id"] for j in after["jobs"] if j["state"] == "running"]
    with session_scope() as session:
        assert running in slots.stranded_jobs(session, set(), 0)
    monkeypatch.setenv("RESOLVER_JOB_MAX_ATTEMPTS", "1")
    reset_caches()
    with session_scope() as session:
        watchdog.sweep(session, get_settings())
    with session_scope() as session:
        ended = session.get(Job, running)
        assert ended is not None and ended.state == "failed"
        assert "stopped 1 times" in (ended.error or "")
        told = session.scalars(select(Callback.action).where(Callback.job_id == running))
        assert told.all(), "its conversation is told"
