"""Webhook ingress under load: a signed GitHub mention, against two baselines in the same process
and a Probot app as a peer.

    uv run python bench/ingress.py [--duration 10] [--rate 200] [--senders 50] [--workers 1]
                                   [--no-peer]

Starts one real server process (uvicorn) on loopback, with its own SQLite database and Redis
db 7 (`--postgres`: then all again on a database of its own on the project's PostgreSQL, in the
same run), serving three endpoints:
- ingress: the real `POST /webhooks/github`, which creates and publishes a job;
- verify + route, no write: the same request path up to the write (body limit, signature,
  parse, route), answering 202 without recording anything: the most the ingress could do were
  its write free;
- bare 204: reads the body and answers 204.
For each endpoint:
1. maximum throughput with wrk (Debian's; a Python closed-loop generator when wrk is missing)
   and a Lua script that signs nothing at run time but gives every request a fresh
   `X-GitHub-Delivery`, so each one creates and publishes a job;
2. latency at a fixed rate (default 200 requests/s) with an open-loop Python load generator,
   timed from each request's scheduled send time, so a slow server cannot hide its queue.
Prints throughput, p50/p90/p99 and the server's CPU time per request, and each endpoint's share
of the bare endpoint's throughput; and at each fixed rate, what the ingress's writer did, from
the server's own /metrics: its batches, their triggers, and the mean time per batch of its two
stages (record, the database transaction; publish, the messages to Redis). CPU time per
request moves less than throughput when other work shares the machine. Figures only; nothing
asserted.

Before them, each installed provider's verify + parse + route cost per mention, in process
(bench/_verify.py, `--verify-only` for just that), beside GitHub's.

Then the peer (bench/_peer.py, skipped with `--no-peer`): a minimal Probot app (bench/probot,
installed by `npm ci` into var/bench/probot) that verifies the same signature and records a
mention in memory, started beside our server. Both receive the same deliveries, measured one
after the other in this run, in two workloads: only mentions, and a mix where nine deliveries in
ten are events both ignore (check runs, statuses, pushes, one in ten to the default branch of a
repository where the bot has no open pull request: bench/_mix.py). Prints both servers' figures,
our throughput as a ratio of Probot's, and the job rows the default-branch pushes made.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))  # bench/_load, and uvicorn's import of this file

from _load import (
    Figures,
    Signed,
    answers,
    fixed_rate,
    free_port,
    max_throughput,
    sign,
    wait_until_answering,
)
from _mix import PUSHED_REPO, mix
from _peer import Peer, probot
from _verify import table as verify_table

from tests.support.metrics import Sample, samples

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "integrations/github/fixtures/issue_comment.created__on_issue.json"
SECRET = "bench-webhook-secret"
# RESOLVER_BENCH_REDIS: a Redis db of the run's own, where several benches share a host.
REDIS = os.environ.get("RESOLVER_BENCH_REDIS", "redis://127.0.0.1:6379/7")
ENDPOINTS = {
    "ingress": "/webhooks/github",
    "verify + route, no write": "/routed",
    "bare 204": "/bare",
}
MIX = "mix (1 in 10 a mention)"
Server = tuple[int, int, str]
"""What a measurement sends to: the server's pid (for its CPU time), its port and the path."""


def bench_env(database_url: str) -> dict[str, str]:
    from cryptography.fernet import Fernet

    return {
        **os.environ,
        "RESOLVER_DATABASE_URL": database_url,
        "RESOLVER_REDIS_URL": REDIS,
        "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
        "RESOLVER_GITHUB_WEBHOOK_SECRET": SECRET,
        "RESOLVER_LOG_LEVEL": "INFO",
    }


@contextlib.contextmanager
def database(tmp: Path, postgres: bool) -> Iterator[str]:
    """A fresh database: a SQLite file in `tmp`, or a PostgreSQL database on the project's own
    server (scripts/postgres), dropped afterwards."""
    if not postgres:
        yield f"sqlite:///{tmp / 'bench.db'}"
        return
    import psycopg

    admin = subprocess.run(
        ["bash", str(ROOT / "scripts/postgres")], capture_output=True, text=True, check=True
    ).stdout.strip()
    plain, name = admin.replace("postgresql+psycopg://", "postgresql://"), f"bench_{os.getpid()}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def bench_app() -> Any:
    """The real app plus the two baselines (uvicorn imports this in each worker process)."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from integrations.github import INTEGRATION as integration
    from resolver.app import Webhooks, serve_app
    from resolver.core.logs import configure_logging
    from resolver.core.settings import get_settings
    from resolver.ingress.endpoint import endpoint
    from resolver.ingress.intake import Accepted, Pending

    async def unrecorded(_pending: Pending) -> Accepted:
        return Accepted("created", job_id=0)

    async def bare(request: Request) -> Response:
        await request.body()
        return Response(status_code=204)

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    app = serve_app()  # as `resolver serve` builds it
    routed = endpoint(integration, get_settings, record=unrecorded)
    app.router.routes.append(Route(ENDPOINTS["verify + route, no write"], routed, methods=["POST"]))
    for middleware in app.user_middleware:  # served as the real webhooks are, where they are
        if middleware.cls is Webhooks:
            middleware.kwargs["hooks"][ENDPOINTS["verify + route, no write"]] = routed
    app.router.routes.append(Route(ENDPOINTS["bare 204"], bare, methods=["POST"]))
    return app


def serve(port: int, workers: int) -> None:
    """The server: `workers` uvicorn processes serving every endpoint on one port."""
    import uvicorn

    uvicorn.run(
        "ingress:bench_app", factory=True, host="127.0.0.1", port=port, workers=workers,
        log_config=None, access_log=False,
    )  # fmt: skip


def prepare(env: dict[str, str], senders: int) -> list[Signed]:
    """Migrate, link `senders` GitHub accounts, and sign one mention from each."""
    os.environ.update(env)
    from tests.conftest import reset_caches

    reset_caches()  # a second run (--postgres) has its own database
    from resolver.store.accounts import add_user, link_identity
    from resolver.store.db import session_scope
    from resolver.store.migrate import upgrade

    upgrade(env["RESOLVER_DATABASE_URL"])
    template = json.loads(FIXTURE.read_text())
    signed = []
    with session_scope() as session:
        for n in range(senders):
            add_user(session, f"user{n}")
            link_identity(session, f"user{n}", "github", str(1000 + n), f"dev{n}")
            payload = json.loads(json.dumps(template))
            payload["sender"].update(login=f"dev{n}", id=1000 + n)
            payload["repository"]["full_name"] = f"bench/repo-{n}"
            payload["comment"]["body"] = "@resolver please fix the flaky export test"
            signed.append(sign(json.dumps(payload).encode(), SECRET))
        bots_old_branch(session)
    return signed


def bots_old_branch(session: Any) -> None:
    """The mix's default-branch pushes go to a repository where the bot once worked (a job on
    one of its branches, its pull request long merged) and that opted in to `conflicts: fix`,
    as a job reading its config recorded it (where this version records it)."""
    from resolver.store import jobs

    job = jobs.create_job(
        session,
        jobs.NewJob(
            source="github", task="an old fix", repo=PUSHED_REPO, requester="dev0",
            requester_id=1, trigger={"sender": {"id": "1000", "login": "dev0"}},
        ),
    )  # fmt: skip
    job.branch = "resolver/1-an-old-fix"
    try:
        from resolver.store import bot_pulls
    except ImportError:  # a version before the record: nothing to seed
        return
    bot_pulls.remember_option(session, "github", PUSHED_REPO, "b" * 40, "conflicts", True)


def push_jobs() -> int:
    """The job rows the mix's default-branch pushes made (should be none)."""
    from sqlalchemy import func, select

    from resolver.store.db import session_scope
    from resolver.store.models import Job

    with session_scope() as session:
        made = select(func.count(Job.id)).where(Job.task.like("Update my pull requests%"))
        return int(session.scalar(made) or 0)


def table(rows: dict[str, dict[str, Figures]]) -> None:
    """One block per measurement, a line per endpoint; throughput as a share of the bare one's."""
    print(f"{'':36}{'req/s':>7}{'p50':>7}{'p90':>7}{'p99':>7}{'cpu ms':>8}{'of bare':>9}")
    for label, figures in rows.items():
        print(label)
        bare = figures["bare 204"].requests_per_second
        for name, f in figures.items():
            share = f"{f.requests_per_second / bare:9.0%}" if label.startswith("max") else ""
            print(
                f"  {name:34}{f.requests_per_second:7.0f}{f.p50:7.1f}{f.p90:7.1f}{f.p99:7.1f}"
                f"{f.cpu_ms:8.2f}{share}"
            )
            if f.errors:
                print(f"  {'':34}non-2xx: {f.errors}")
    print("latencies in ms; cpu ms: the server's CPU time per request")


def measurements(
    args: argparse.Namespace,
    script: Path,
    servers: dict[str, Server],
    workloads: dict[str, list[Signed]],
    writer: int | None = None,
    writers: dict[str, Writer] | None = None,
) -> dict[str, dict[str, dict[str, Figures]]]:
    """Each workload against each server, one after the other: figures by measurement, then
    workload, then server. With `writer` (our server's port), what its writer did at each fixed
    rate goes into `writers`."""
    tool = "wrk" if shutil.which("wrk") else "python"
    rows = {
        f"max throughput ({tool}, {args.connections} conns)": {
            workload: {
                name: max_throughput(
                    pid, port, path, signed, script, args.duration, args.connections
                )
                for name, (pid, port, path) in servers.items()
            }
            for workload, signed in workloads.items()
        }
    }
    for rate in (float(r) for r in args.rate.split(",")):
        label = f"fixed {rate:.0f} req/s (open loop)"
        before: dict[Sample, float] = scrape(writer) if writer is not None else {}
        rows[label] = {
            workload: {
                name: fixed_rate(pid, port, path, signed, rate, args.duration)
                for name, (pid, port, path) in servers.items()
            }
            for workload, signed in workloads.items()
        }
        if writer is not None and writers is not None:
            writers[label] = Writer.between(before, scrape(writer))
    return rows


@dataclass(frozen=True)
class Writer:
    """The ingress's writer thread over a measurement, from the server's own /metrics
    (`resolver_intake_*`): its batches, and per batch the triggers and the mean milliseconds of each
    stage (record: the database transaction; publish: the messages to Redis)."""

    batches: int
    triggers: float
    record_ms: float
    publish_ms: float

    @classmethod
    def between(cls, before: dict[Sample, float], after: dict[Sample, float]) -> Writer:
        grew = {key: after[key] - before.get(key, 0.0) for key in after}
        batches = grew.get(("resolver_intake_batch_triggers_count", ()), 0.0)
        if not batches:
            return cls(0, 0.0, 0.0, 0.0)

        def mean_ms(stage: str) -> float:
            return (
                1000 * grew.get(("resolver_intake_seconds_sum", (("stage", stage),)), 0.0) / batches
            )

        triggers = grew.get(("resolver_intake_batch_triggers_sum", ()), 0.0) / batches
        return cls(int(batches), triggers, mean_ms("record"), mean_ms("publish"))


def scrape(port: int) -> dict[Sample, float]:
    """Every sample of the server's /metrics (the intake's among them)."""
    return samples(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text)


def writer_lines(writers: dict[str, Writer]) -> None:
    """Where a mention's write goes at each fixed rate: the writer's batches and their stages."""
    for label, w in writers.items():
        rate = label.split(" (")[0]
        print(
            f"the writer at {rate.removeprefix('fixed ')}: {w.batches} batches of"
            f" {w.triggers:.2f} triggers; per batch (mean, its /metrics): record"
            f" {w.record_ms:.2f} ms, publish {w.publish_ms:.2f} ms"
        )


def against_probot(
    args: argparse.Namespace, tmp: Path, script: Path, ours: Server, mentions: list[Signed]
) -> None:
    """Start the Probot peer, send it and our ingress the same workloads, print the table."""
    with probot(SECRET, tmp / "probot.log") as peer:
        servers = {"Resolver": ours, "Probot": (peer.pid, peer.port, peer.path)}
        workloads = {"mentions": mentions, MIX: mix(mentions, SECRET)}
        codes = {
            name: answers(port, path, workloads[MIX]) for name, (_, port, path) in servers.items()
        }
        peer_table(peer, codes, measurements(args, script, servers, workloads))


def peer_table(
    peer: Peer, codes: dict[str, dict[str, int]], rows: dict[str, dict[str, dict[str, Figures]]]
) -> None:
    """A line per workload: our figures, Probot's, and our throughput as a ratio of Probot's."""
    print(f"\nagainst Probot {peer.version} (Node {peer.node}, `probot run`, LOG_LEVEL=warn)")
    for name, by_event in codes.items():
        print(f"  {name} answers " + ", ".join(f"{e} {c}" for e, c in by_event.items()))
    columns = f"{'req/s':>7}{'p50':>7}{'p99':>7}{'cpu ms':>8}"
    print(f"{'':30}{'Resolver':^29}{'Probot':^29}".rstrip())
    print(f"{'':30}{columns}{columns}{'ours/Probot':>13}")
    for label, workloads in rows.items():
        print(label)
        for workload, figures in workloads.items():
            ours, theirs = figures["Resolver"], figures["Probot"]
            ratio = ours.requests_per_second / theirs.requests_per_second
            cells = "".join(
                f"{f.requests_per_second:7.0f}{f.p50:7.1f}{f.p99:7.1f}{f.cpu_ms:8.2f}"
                for f in (ours, theirs)
            )
            print(f"  {workload:28}{cells}{f'{ratio:13.2f}' if label.startswith('max') else ''}")
            for name, f in figures.items():
                if f.errors:
                    print(f"  {'':28}{name} non-2xx: {f.errors}")
    print(
        "the same signed deliveries to both; mix: 9 in 10 are check runs, statuses and pushes"
        " (1 in 10 to the default branch of a repository without a bot pull request)"
    )
    print(f"job rows the default-branch pushes made: {push_jobs()}")


def python_speed() -> float:
    """A yardstick for comparing figures across machines (a typical core: about 20 ms)."""
    started = time.perf_counter()
    sum(range(10**6))
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement")
    parser.add_argument(
        "--rate", default="200", help="fixed rates in requests/s, comma-separated (200,60)"
    )
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--senders", type=int, default=50, help="distinct linked senders")
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes (resolver serve --workers)"
    )
    parser.add_argument(
        "--postgres", action="store_true", help="PostgreSQL (scripts/postgres) too, after SQLite"
    )
    parser.add_argument(
        "--no-peer", action="store_true", help="skip the Probot peer (needs node and npm)"
    )
    parser.add_argument(
        "--verify-only", action="store_true", help="only each provider's verify + route cost"
    )
    parser.add_argument(
        "--deliveries", type=int, default=2000, help="in-process deliveries per event and round"
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.workers)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ingress-"))
    try:
        verify_table(tmp, args.deliveries)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.verify_only:
        return
    for postgres in (False, True) if args.postgres else (False,):
        tmp = Path(tempfile.mkdtemp(prefix="bench-ingress-"))
        try:
            with database(tmp, postgres) as url:
                measure(args, tmp, bench_env(url), postgres)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def measure(args: argparse.Namespace, tmp: Path, env: dict[str, str], postgres: bool) -> None:
    """Start the server on `env`'s database, measure every endpoint, print the table."""
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    signed = prepare(env, args.senders)
    script = tmp / "post.lua"
    port = free_port()
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--workers", str(args.workers)],
        env=env, stderr=log, stdout=log,
    )  # fmt: skip
    try:
        wait_until_answering("the server", port, "/healthz", server, tmp / "server.log")
        endpoints = {name: (server.pid, port, path) for name, path in ENDPOINTS.items()}
        writers: dict[str, Writer] = {}
        rows = measurements(args, script, endpoints, {"mention": signed}, port, writers)
        processes = f"{args.workers} server process{'es' if args.workers > 1 else ''}"
        print(f"\n{processes}, {'PostgreSQL' if postgres else 'SQLite'}")
        table({label: workloads["mention"] for label, workloads in rows.items()})
        writer_lines(writers)
        if not args.no_peer:
            against_probot(args, tmp, script, endpoints["ingress"], signed)
        load = os.getloadavg()[0]
        print(f"this machine: sum(range(10**6)) in {python_speed():.0f} ms, load {load:.1f}")
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
        redis.Redis.from_url(REDIS).flushdb()


if __name__ == "__main__":
    main()
