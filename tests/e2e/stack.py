"""The whole service for end-to-end tests: ingress in process, a real Celery worker (and beat)
in child processes, Redis, the Docker sandbox, git over HTTP and the scripted LLM over HTTP.

Each provider's test adds its stand-in API and its signed webhook on top.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import select
from starlette.testclient import TestClient

from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.models import Callback, CallbackAttempt, Job, User
from sandbox import SandboxInfo, list_sandboxes, remove_all
from tests.conftest import ResolverEnv
from tests.support.llm_server import Reply, ScriptedLLMServer, finish, tool
from tests.support.procs import kill, start, stop, wait_until

FIXED = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
REPO_FILES = {
    "calc.py": BROKEN,
    "test_calc.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class AddTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
}
SUMMARY = "add() subtracted; it now adds. The tests pass."


def fix_script() -> list[Reply]:
    """The model's part: read, fix, test, finish with changed code."""
    return [
        tool("execute_bash", command="cat calc.py"),
        tool(
            "str_replace_editor",
            command="str_replace",
            path="calc.py",
            old_str="    return a - b\n",
            new_str="    return a + b\n",
        ),
        tool("execute_bash", command="python3 -m unittest -q 2>&1 | tail -n 2"),
        finish("changed_code", SUMMARY),
    ]


def by_step(replies: list[Reply], delay: float = 0.0) -> Callable[[dict[str, Any]], Reply]:
    """A script that answers by the step the request is at, so a retried job (a fresh
    conversation) is answered from the start again. `delay` slows every answer."""

    def answer(request: dict[str, Any]) -> Reply:
        step = sum(1 for m in request["messages"] if m.get("role") == "assistant")
        reply = replies[min(step, len(replies) - 1)]
        return replace(reply, delay=delay) if delay else reply

    return answer


@dataclass
class Stack:
    env: ResolverEnv
    llm: ScriptedLLMServer
    tmp: Path
    extra: dict[str, str] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def child_env(self) -> dict[str, str]:
        return self.env.child_env(**self.extra)

    def start_worker(self, name: str = "w1", concurrency: int = 2) -> subprocess.Popen[bytes]:
        proc = start(
            self.child_env(),
            self.tmp / f"worker-{name}.log",
            "-m",
            "celery",
            "-A",
            "resolver.tasks:app",
            "worker",
            "-Q",
            "jobs,callbacks,default",
            "-c",
            str(concurrency),
            "-n",
            f"{name}@%h",
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
        )
        self.procs.append(proc)
        return proc

    def start_resolver_worker(
        self, name: str, queues: str, concurrency: int, metrics_port: int = 0, **env: str
    ) -> subprocess.Popen[bytes]:
        """`resolver worker` as the Procfile runs it: the threads pool, its metrics port."""
        args = ["--queues", queues, "--concurrency", str(concurrency), "--pool", "threads"]
        args += ["--hostname", f"{name}@%h", "--metrics-port", str(metrics_port)]
        log = self.tmp / f"worker-{name}.log"
        proc = start({**self.child_env(), **env}, log, "-m", "resolver.cli", "worker", *args)
        self.procs.append(proc)
        return proc

    def start_beat(self) -> subprocess.Popen[bytes]:
        proc = start(
            self.child_env(),
            self.tmp / "beat.log",
            "-m",
            "celery",
            "-A",
            "resolver.tasks:app",
            "beat",
            "-s",
            str(self.tmp / "beat-schedule"),
            "--pidfile=",
            "--loglevel",
            "INFO",
        )
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        kill(proc)
        self.procs.remove(proc)

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        """A warm shutdown, as an operator's: what the process holds (its spans) goes out."""
        stop(proc)
        self.procs.remove(proc)

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.tmp.glob("*.log")))

    def job(self, job_id: int) -> Job:
        with session_scope() as session:
            job = session.get(Job, job_id)
            assert job is not None
            session.expunge(job)
            return job

    def wait(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll `check`; on a timeout the service's logs go to the test's output."""
        try:
            wait_until(check, timeout, what)
        except AssertionError:
            print(self.logs()[-20000:], file=sys.stderr)
            raise

    def wait_finished(self, job_id: int, timeout: float = 240) -> Job:
        self.wait(lambda: self.job(job_id).finished_at is not None, timeout, f"job {job_id}")
        return self.job(job_id)

    def callbacks(self, job_id: int | None = None) -> list[Callback]:
        with session_scope() as session:
            query = select(Callback).order_by(Callback.id)
            if job_id is not None:
                query = query.where(Callback.job_id == job_id)
            found = list(session.scalars(query))
            for item in found:
                session.expunge(item)
            return found

    def attempts(self, callback_id: int) -> list[CallbackAttempt]:
        with session_scope() as session:
            found = list(
                session.scalars(
                    select(CallbackAttempt)
                    .where(CallbackAttempt.callback_id == callback_id)
                    .order_by(CallbackAttempt.number)
                )
            )
            for item in found:
                session.expunge(item)
            return found

    def wait_callbacks_settled(self, job_id: int | None = None, timeout: float = 150) -> None:
        """Every callback recorded so far has been sent or has failed for good."""
        try:
            wait_until(
                lambda: all(c.state != "pending" for c in self.callbacks(job_id)),
                timeout,
                "callbacks to settle",
            )
        except AssertionError:
            pending = [(c.id, c.action) for c in self.callbacks(job_id) if c.state == "pending"]
            print(pending, self.logs()[-20000:], file=sys.stderr)
            raise

    def link(self, user: str, provider: str, external_id: str, login: str | None = None) -> None:
        with session_scope() as session:
            if session.scalar(select(User).where(User.name == user)) is None:
                accounts.add_user(session, user)
            accounts.link_identity(session, user, provider, external_id, login)

    def sandboxes(self) -> list[SandboxInfo]:
        """The stack's sandbox containers, running or not."""
        return list_sandboxes(self.extra["RESOLVER_DEPLOYMENT_ID"])

    def sandbox_ids(self) -> set[str]:
        return {info.container_id for info in self.sandboxes()}

    def close(self) -> None:
        """Kill the stack's processes and remove what they started. Killed, not stopped: the
        test has seen what it waited for, and a worker's warm shutdown cost about 2 s a test
        (ten end-to-end tests one after another: 52 s with it, 32 s without; the stack group on
        5 workers: 333 s and 6.1 min of CPU with it, 317 s and 3.8 min without). A test of a
        shutdown stops its own processes."""
        for proc in list(self.procs):
            kill(proc)
        self.procs.clear()
        # A killed worker leaves its sandbox running; the stack's own deployment id names
        # everything it started, and nothing else.
        remove_all(self.extra["RESOLVER_DEPLOYMENT_ID"])


@contextmanager
def running_stack(env: ResolverEnv, tmp: Path, **extra: str) -> Iterator[Stack]:
    llm = ScriptedLLMServer([]).start()
    try:
        settings = {
            "RESOLVER_LLM_MODEL": "openai/scripted-model",
            "RESOLVER_LLM_BASE_URL": llm.base_url,
            "RESOLVER_LLM_API_KEY": "scripted-key",
            "RESOLVER_LLM_INPUT_COST_PER_TOKEN": "0.000003",
            "RESOLVER_LLM_OUTPUT_COST_PER_TOKEN": "0.000015",
            "RESOLVER_BOT_NAME": "resolver",
            "RESOLVER_PUBLIC_URL": "http://resolver.test",
            "RESOLVER_STATUS_INTERVAL": "1",
            "RESOLVER_DEPLOYMENT_ID": f"e2e-{uuid.uuid4().hex[:12]}",
            **extra,
        }
        stack = Stack(env, llm, tmp, settings)
        try:
            yield stack
        finally:
            stack.close()
    finally:
        llm.stop()


def ingress(stack: Stack, monkeypatch: Any) -> TestClient:
    """The webhook app in this process, under the stack's settings."""
    from resolver.app import create_app
    from tests.conftest import reset_caches

    for key, value in stack.extra.items():
        monkeypatch.setenv(key, value)
    reset_caches()
    return TestClient(create_app(), raise_server_exceptions=True)
