"""The whole service for bench/load.py: real `resolver` processes in a process layout, and in
this process the GitHub stand-in (noting when 👀 and each pull request arrive), the git server
and the scripted model. A `Rig` owns one run and removes everything it made on the way out.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from integrations.standin.server import Reply as Answer
from integrations.standin.server import Routed
from tests.e2e.github_flow import github_settings, issue_comment
from tests.e2e.stack import REPO_FILES, SUMMARY, by_step
from tests.integrations.github.conftest import APP_ID, INSTALLATION_ID, REPO
from tests.support.llm_server import Reply, ScriptedLLMServer, finish, tool

ROOT = Path(__file__).resolve().parents[1]
# RESOLVER_BENCH_REDIS: a Redis db of the run's own, where several benches share a host.
REDIS = os.environ.get("RESOLVER_BENCH_REDIS", "redis://127.0.0.1:6379/13")
REACT = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
PULLS = "POST /repos/{owner}/{repo}/pulls"
BASELINE_WORKER = "resolver worker --queues jobs,callbacks,default --pool prefork --concurrency 2"
MiB = 1024 * 1024
SECRET_KEY = Fernet.generate_key().decode()


@dataclass(frozen=True)
class Layout:
    """Named commands, as Procfile lines; every one but `web` and `beat` is a worker."""

    name: str
    commands: dict[str, str]

    @property
    def workers(self) -> list[str]:
        return [name for name in self.commands if name not in ("web", "beat")]


def procfile(slots: int | None = None) -> Layout:
    """The Procfile's layout; with `slots`, its jobs worker runs that many jobs at once."""
    lines = (ROOT / "Procfile").read_text().splitlines()
    pairs = (line.split(":", 1) for line in lines if line.strip() and not line.startswith("#"))
    commands = {name.strip(): command.strip() for name, command in pairs}
    if slots is None:
        return Layout("Procfile", commands)
    worker = re.sub(r"--concurrency \d+", f"--concurrency {slots}", commands["worker"])
    return Layout(f"Procfile, {slots} job slots", {**commands, "worker": worker})


def two_slots() -> Layout:
    """Today's layout: one prefork worker of two slots for every queue, beat and web."""
    commands = procfile().commands
    return Layout(
        "two-slot", {"web": commands["web"], "worker": BASELINE_WORKER, "beat": commands["beat"]}
    )


def argv(command: str, port: int) -> list[str]:
    """A Procfile command as this interpreter runs it: `resolver …` is `python -m resolver.cli
    …`; the web process listens on loopback at `port`."""
    command = re.sub(r"\$\{PORT(:-\d+)?\}|\$PORT", str(port), command)
    words = shlex.split(command)
    if "--host" in words:
        words[words.index("--host") + 1] = "127.0.0.1"
    assert words[0] == "resolver", command
    return [sys.executable, "-m", "resolver.cli", *words[1:]]


class TimedGitHub(GitHubAPI):
    """The GitHub stand-in, noting when the bot's 👀 reached each comment and when each pull
    request was opened (by its head branch), on this process's clock."""

    def __init__(self, **options: Any) -> None:
        self.eyes_at: dict[int, float] = {}
        self.pull_at: dict[str, float] = {}
        super().__init__(**options)

    def serve(self, call: Routed) -> Answer:
        reply = super().serve(call)
        at, body = time.time(), call.body if isinstance(call.body, dict) else {}
        if call.route == REACT and reply[0] in (200, 201) and body.get("content") == "eyes":
            self.eyes_at.setdefault(int(call.params["comment_id"]), at)
        if call.route == PULLS and reply[0] == 201 and body.get("draft"):
            self.pull_at.setdefault(str(body["head"]).rsplit(":", 1)[-1], at)
        return reply


def script(calls: int) -> list[Reply]:
    """`calls` completions that end in changed code: the fix, `calls - 2` test runs, finish."""
    fix = tool(
        "str_replace_editor",
        command="str_replace",
        path="calc.py",
        old_str="    return a - b\n",
        new_str="    return a + b\n",
    )
    test = tool("execute_bash", command="python3 -m unittest -q 2>&1 | tail -n 2")
    return [fix, *[test] * (calls - 2), finish("changed_code", SUMMARY)]


def app_key(path: Path) -> str:
    """A fresh App key: the private half written to `path`, the public half returned."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.write_bytes(private)
    path.chmod(0o600)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return public.decode()


@dataclass(frozen=True)
class Memory:
    """A worker's memory: its session (the leader and every child it forked: prefork slots,
    git) in all, the leader alone, and the children by command name."""

    rss: int
    pss: int
    leader: tuple[int, int]
    children: dict[str, tuple[int, int, int]]  # command -> (processes, RSS, PSS)


@dataclass
class Sample:
    at: float
    running: int
    memory: dict[str, Memory]  # by worker name


def _parent_and_session(pid: str) -> tuple[int, int] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[3])


_LIBC = ctypes.CDLL(None, use_errno=True)
_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())  # kcmp(2), KCMP_VM below
_KCMP_VM = 1


def _shares_memory(one: int, other: int) -> bool:
    """Whether two processes have one address space: a child vforked (as subprocess does) and
    not yet exec'd, whose smaps would count its parent's memory a second time. Once it has
    exec'd it never shares again, so checking before reading its smaps is enough."""
    return _KCMP is not None and _LIBC.syscall(_KCMP, one, other, _KCMP_VM, 0, 0) == 0


def _rss_pss(pid: int) -> tuple[int, int]:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    found = dict(re.findall(r"^(Rss|Pss):\s+(\d+) kB", text, re.M))
    return int(found.get("Rss", 0)) * 1024, int(found.get("Pss", 0)) * 1024


def _command(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None  # it has exited


def session_memory(leaders: dict[str, int]) -> dict[str, Memory]:
    """RSS and PSS (/proc/<pid>/smaps_rollup) of each worker's process session: every worker
    starts in a session of its own, and its children stay in it. A vforked child that has not
    exec'd yet is its parent's memory, counted once."""
    members: dict[int, list[tuple[int, int]]] = {pid: [] for pid in leaders.values()}
    for entry in os.listdir("/proc"):
        ids = _parent_and_session(entry) if entry.isdigit() else None
        if ids is not None and ids[1] in members:
            members[ids[1]].append((int(entry), ids[0]))
    by_worker = {}
    for name, leader in leaders.items():
        own, children = _rss_pss(leader), dict[str, tuple[int, int, int]]()
        for pid, parent in members[leader]:
            if pid == leader or _shares_memory(parent, pid):
                continue
            command = _command(pid)
            if command is None:
                continue
            rss, pss = _rss_pss(pid)
            count, total_rss, total_pss = children.get(command, (0, 0, 0))
            children[command] = (count + 1, total_rss + rss, total_pss + pss)
        rss = own[0] + sum(c[1] for c in children.values())
        pss = own[1] + sum(c[2] for c in children.values())
        by_worker[name] = Memory(rss, pss, own, children)
    return by_worker


NETWORK = {
    "RESOLVER_SANDBOX_EGRESS": "allowlist",
    "RESOLVER_SANDBOX_EGRESS_ALLOW": "example.invalid",
}
"""A job may reach one host: its sandbox is on a network of its own, behind a proxy of its own."""


class Rig:
    """One run of the service: its own directory, database, Redis db, stand-ins and sandbox
    deployment. Everything it makes registers its removal on `cleanup` as it is made."""

    def __init__(
        self,
        layout: Layout,
        mentions: int,
        delay: float,
        calls: int,
        postgres: bool,
        replies: list[Reply] | None = None,
        network: bool = False,
    ) -> None:
        """`replies`: the model's script for every job, in place of `script(calls)`. `network`:
        every job's sandbox may reach one host, so each runs on an internal network of its own
        behind a proxy of its own."""
        self.layout, self.mentions, self.delay, self.calls = layout, mentions, delay, calls
        self.replies = replies
        self.postgres = postgres
        self.network = network
        self.deployment = f"bench-load-{uuid.uuid4().hex[:10]}"
        self.logins = [f"dev{n:02d}" for n in range(mentions)]
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.port = 0
        self.cleanup = contextlib.ExitStack()

    def __enter__(self) -> Rig:
        try:
            self._open()
        except BaseException:
            self.cleanup.close()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.cleanup.close()

    def _open(self) -> None:
        from ingress import database  # bench/ingress: a SQLite file, or a PostgreSQL database

        self.tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
        self.cleanup.callback(shutil.rmtree, self.tmp, ignore_errors=True)
        self.database_url = self.cleanup.enter_context(database(self.tmp, self.postgres))
        public = app_key(self.tmp / "app.pem")
        self.api = TimedGitHub(app_id=APP_ID, public_key=public)
        self.cleanup.callback(self.api.close)
        self.api.add_installation(INSTALLATION_ID)
        known, reaches = self.api.tokens.__contains__, self.api.may_reach_path
        self.git = GitHttpServer(self.tmp / "git", accepts=known, reaches=reaches)
        self.cleanup.callback(self.git.close)
        self.llm = ScriptedLLMServer(
            by_step(self.replies or script(self.calls), self.delay)
        ).start()
        self.cleanup.callback(self.llm.stop)
        bare = create_bare_repo(self.git.root, REPO, REPO_FILES)
        writers = dict.fromkeys(self.logins, "write")
        self.api.add_repo(REPO, self.git.url_for(REPO), collaborators=writers, bare=bare)
        self._prepare()
        self._start()
        self._wait_ready()

    def env(self) -> dict[str, str]:
        return {
            "RESOLVER_DATABASE_URL": self.database_url,
            "RESOLVER_REDIS_URL": REDIS,
            "RESOLVER_SECRET_KEYS": SECRET_KEY,
            "RESOLVER_DEPLOYMENT_ID": self.deployment,
            "RESOLVER_SANDBOX_WORKSPACE_ROOT": str(self.tmp / "workspaces"),
            "RESOLVER_LLM_MODEL": "openai/scripted-model",
            "RESOLVER_LLM_BASE_URL": self.llm.base_url,
            "RESOLVER_LLM_API_KEY": "scripted-key",
            "RESOLVER_LLM_INPUT_COST_PER_TOKEN": "0.000003",
            "RESOLVER_LLM_OUTPUT_COST_PER_TOKEN": "0.000015",
            "RESOLVER_BOT_NAME": "resolver",
            "RESOLVER_PUBLIC_URL": "http://resolver.test",
            # Every mention is on one repository: its cap must not be what limits the run.
            "RESOLVER_MAX_JOBS_PER_REPO": str(max(self.mentions, 5)),
            "RESOLVER_LOG_LEVEL": "INFO",
            **github_settings(self.api, self.tmp / "app.pem"),
            **(NETWORK if self.network else {}),
        }

    def _prepare(self) -> None:
        """This process reads and writes the run's database: migrate it, link every sender."""
        import redis

        from resolver.store import accounts
        from resolver.store.db import engine_for, session_scope
        from resolver.store.migrate import upgrade
        from sandbox import remove_all
        from tests.conftest import reset_caches

        os.environ.update(self.env())
        reset_caches()
        flush = redis.Redis.from_url(REDIS).flushdb
        flush()
        self.cleanup.callback(flush)
        self.cleanup.callback(remove_all, self.deployment)
        upgrade(self.database_url)
        self.cleanup.callback(lambda: engine_for(self.database_url).dispose())
        with session_scope() as session:
            for n, login in enumerate(self.logins):
                accounts.add_user(session, f"user{n:02d}")
                accounts.link_identity(session, f"user{n:02d}", "github", str(7000 + n), login)

    def _start(self) -> None:
        from _load import free_port

        self.port = free_port()
        env = {**os.environ, **self.env(), "PYTHONPATH": str(ROOT)}
        self.cleanup.callback(self._stop_processes)
        for name, command in self.layout.commands.items():
            with (self.tmp / f"{name}.log").open("ab") as log:
                self.procs[name] = subprocess.Popen(
                    argv(command, self.port), env=env, cwd=self.tmp, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip

    def _wait_ready(self, timeout: float = 120) -> None:
        """The web process answers, and every worker answers a ping."""
        import httpx

        from resolver.broker.celery_app import get_celery

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    break
            time.sleep(0.2)
        while time.monotonic() < deadline:
            self.check_alive()
            if len(get_celery().control.ping(timeout=1.0)) >= len(self.layout.workers):
                return
        raise RuntimeError(f"the service did not start:\n{self.logs()}")

    def check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}):\n{self.logs()}")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def mention(self, n: int) -> tuple[int, Any]:
        """Sender n's signed mention on issue 100 + n: its comment id and the delivery."""
        from tests.integrations.deliveries import github

        text = "@resolver please fix add()"
        payload = issue_comment(
            self.api, self.git, text, number=100 + n, login=self.logins[n], user_id=7000 + n
        )
        return int(payload["comment"]["id"]), github("issue_comment.created", payload)

    def sample(self) -> Sample:
        from sqlalchemy import func, select

        from resolver.store.db import session_scope
        from resolver.store.models import Job

        with session_scope() as session:
            running = session.scalar(select(func.count()).where(Job.state == "running")) or 0
        leaders = {name: self.procs[name].pid for name in self.layout.workers}
        return Sample(time.time(), int(running), session_memory(leaders))

    def logs(self, tail: int = 6000) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-tail:]}"
            for p in sorted(self.tmp.glob("*.log"))
        )

    def _stop_processes(self) -> None:
        """SIGTERM to each process's whole session, SIGKILL to what is left after 15 s."""
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # children that outlived their leader
            proc.wait(timeout=30)


@contextlib.contextmanager
def sampling(made: Rig, every: float) -> Iterator[list[Sample]]:
    """Samples of `made`, one every `every` seconds, taken by a thread until the block ends."""
    into: list[Sample] = []
    stop = threading.Event()

    def loop() -> None:
        due = time.monotonic()
        while not stop.is_set():
            with contextlib.suppress(Exception):
                into.append(made.sample())
            due += every
            stop.wait(max(0.0, due - time.monotonic()))

    thread = threading.Thread(target=loop, name="sampler", daemon=True)
    thread.start()
    try:
        yield into
    finally:
        stop.set()
        thread.join()
