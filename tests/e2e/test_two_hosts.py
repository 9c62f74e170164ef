"""Two worker hosts on one PostgreSQL and one Redis, each with its own Docker engine: jobs
spread across both, a host that dies mid-job loses nothing, and its orphans go when it is back.
Also two web processes on one port, and two beats."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer
from sandbox import image_tag
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import github_settings, issue_comment, widgets
from tests.e2e.stack import Stack, by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.support.ports import free_port
from tests.support.procs import start, wait_until

pytestmark = [pytest.mark.timeout(600), pytest.mark.parametrize("backend", ["postgresql"])]
BRIDGE = "rsv-test-br2"
# Kept between runs: the sandbox image is loaded into it once.
DATA_ROOT = Path.home() / ".cache" / "resolver" / "engine2"
FAST = {
    "RESOLVER_LEASE_SECONDS": "6",
    "RESOLVER_RECONCILE_INTERVAL": "1",
    "RESOLVER_QUEUED_GRACE_SECONDS": "2",
    "RESOLVER_SANDBOX_REAP_INTERVAL": "5",
}


class Engine:
    """A second dockerd: its own socket, data root, exec root and bridge."""

    def __init__(self) -> None:
        self.run = Path(tempfile.mkdtemp(prefix="rsv-e2-", dir="/var/tmp"))
        self.host = f"unix://{self.run / 'docker.sock'}"
        self.proc: subprocess.Popen[bytes] | None = None

    def docker(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            ["docker", "-H", self.host, *args], capture_output=True, text=True, **kwargs
        )

    def start(self) -> None:
        log = (self.run / "dockerd.log").open("ab")
        self.proc = subprocess.Popen(
            [
                "dockerd", "--host", self.host, "--data-root", str(DATA_ROOT),
                "--exec-root", str(self.run / "exec"), "--pidfile", str(self.run / "pid"),
                "--bridge", BRIDGE, "--iptables=false", "--ip6tables=false",
                "--storage-driver", "overlay2",
            ],
            stdout=log, stderr=log, start_new_session=True,
        )  # fmt: skip
        wait_until(lambda: self.docker("info").returncode == 0, 90, "the second engine")

    def kill(self) -> None:
        """The host dies: its engine with it (the containers' processes too)."""
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def containers(self, deployment: str) -> list[str]:
        found = self.docker("ps", "-aq", "--filter", f"label=resolver.deployment={deployment}")
        return found.stdout.split()


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    DATA_ROOT.mkdir(parents=True, exist_ok=True)
    # One second engine on this machine at a time: two test runs (a worktree beside a fresh
    # clone) would share its data root, where containerd waits for the other's lock, and its
    # bridge, which the first to end deletes.
    with (DATA_ROOT.parent / "engine2.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield from _second_engine()


def _second_engine() -> Iterator[Engine]:
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], capture_output=True)
    subprocess.run(["ip", "addr", "add", "172.30.250.1/24", "dev", BRIDGE], capture_output=True)
    subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)
    second = Engine()
    try:
        second.start()
        tag = image_tag()
        if second.docker("image", "inspect", tag).returncode != 0:
            saved = subprocess.Popen(["docker", "save", tag], stdout=subprocess.PIPE)
            loaded = second.docker("load", stdin=saved.stdout)
            saved.wait()
            assert loaded.returncode == 0, loaded.stderr
        yield second
    finally:
        second.kill()
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
        shutil.rmtree(second.run, ignore_errors=True)


def bot_statuses(api: GitHubAPI, number: int) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number]


def test_a_host_that_dies_mid_job_loses_nothing_and_its_orphans_go_when_it_is_back(
    backend: str,
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
    engine: Engine,
) -> None:
    widgets(github_api, git_server)
    settings = {**github_settings(github_api, key_file), **FAST}
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        deployment = stack.extra["RESOLVER_DEPLOYMENT_ID"]
        stack.link("alice", "github", "5001", "alice")
        stack.llm.set_script(by_step(fix_script(), delay=1.5))
        stack.start_beat()
        stack.start_resolver_worker("a", "jobs,callbacks,default", 1)
        host_b = stack.start_resolver_worker(
            "b", "jobs,callbacks,default", 1, DOCKER_HOST=engine.host
        )
        client = ingress(stack, monkeypatch)
        job_ids = []
        for number in (7, 8):
            payload = issue_comment(
                github_api, git_server, "@resolver please fix add()", number=number
            )
            job_ids.append(
                int(post(client, github("issue_comment.created", payload)).json()["job_id"])
            )
        # Spread: one job's sandbox on each engine.
        wait_until(lambda: bool(engine.containers(deployment)), 90, "a sandbox on host b")
        wait_until(lambda: bool(stack.sandbox_ids()), 90, "a sandbox on host a")
        stack.kill(host_b)
        engine.kill()
        killed = datetime.now(UTC)
        finished = [stack.wait_finished(job_id, timeout=180) for job_id in job_ids]
        for job in finished:
            assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
        # The dead host's job ran again on host a, from the start, once its lease ran out.
        assert sorted(job.attempts for job in finished) == [1, 2]
        [moved] = [job for job in finished if job.attempts == 2]
        assert moved.finished_at is not None
        # Its lease (6 s) and a sweep (1 s), then a whole run (about 15 s here).
        assert (moved.finished_at - killed).total_seconds() < 60
        stack.wait_callbacks_settled()
        # Host b comes back: its engine still holds the dead job's sandbox, which its worker's
        # own sweep removes.
        engine.start()
        assert engine.containers(deployment), "the orphan should outlive its engine's restart"
        stack.start_resolver_worker("b2", "jobs", 1, DOCKER_HOST=engine.host)
        wait_until(lambda: not engine.containers(deployment), 60, "host b's orphans reaped")

    assert len(github_api.pulls) == 2  # one each, though one job ran twice
    for number in (7, 8):
        [status] = bot_statuses(github_api, number)
        assert "Done" in status


def test_two_web_processes_on_one_port_record_each_delivery_once(
    backend: str,
    resolver_env: ResolverEnv,
    tmp_path: Path,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    import httpx

    widgets(github_api, git_server)
    settings = github_settings(github_api, key_file)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", "5001", "alice")
        port = free_port()
        web = start(
            stack.child_env(), tmp_path / "web.log", "-m", "resolver.cli", "serve",
            "--port", str(port), "--workers", "2",
        )  # fmt: skip
        stack.procs.append(web)
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _ok(f"{url}/healthz"), 60, "the web processes")
        deliveries = []
        for number in range(1, 13):
            payload = issue_comment(github_api, git_server, "@resolver fix it", number=number)
            deliveries.append(github("issue_comment.created", payload))
        answers: list[int] = []

        def send(delivery: object) -> None:
            with httpx.Client(base_url=url) as client:
                answer = client.post(delivery.path, content=delivery.body, headers=delivery.headers)  # type: ignore[attr-defined]
                answers.append(answer.status_code)

        # Each delivery three times at once (GitHub's redelivery, a proxy's retry).
        threads = [threading.Thread(target=send, args=(d,)) for d in deliveries * 3]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        jobs = stack_jobs(stack)
    assert sorted(set(answers)) in ([200, 202], [202])
    assert len(jobs) == 12


def test_two_beats_run_each_periodic_duty_once(
    backend: str, resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    with running_stack(resolver_env, tmp_path, **FAST) as stack:
        stack.start_resolver_worker("a", "callbacks,default", 2)
        first = stack.start_beat()
        second = start(
            stack.child_env(), tmp_path / "beat-2.log", "-m", "celery", "-A",
            "resolver.tasks:app", "beat", "-s", str(tmp_path / "beat-2"),
            "--pidfile=",
        )  # fmt: skip
        stack.procs.append(second)
        log = tmp_path / "worker-a.log"
        wait_until(
            lambda: log.read_text().count("duty.skipped duty=reconcile") >= 3, 60, "both beats"
        )
        del first
        text = log.read_text()
    # The slot is the one claimed, not the log line's second: a claim at 51.999 logs at 52.001.
    ran = re.findall(r"INFO +duty\.ran duty=reconcile slot=(\d+)", text)
    assert ran and len(ran) == len(set(ran))  # it ran, and never twice in one slot


def stack_jobs(stack: Stack) -> list[int]:
    from sqlalchemy import select

    from resolver.store.db import session_scope
    from resolver.store.models import Job

    with session_scope() as session:
        return list(session.scalars(select(Job.id)))


def _ok(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
