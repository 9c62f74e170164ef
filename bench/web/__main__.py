"""The web app's pages over a long history: time to first byte of the job list with 10,000 jobs
and of a job page with 200 steps, side by side with `/healthz` in the same run.

    uv run python bench/web [--requests 200] [--warm-up 20] [--jobs 10000] [--steps 200]
                            [--throughput 0] [--connections 8] [--no-reader] [--postgres]

Seeds a fresh SQLite file (`--postgres`: a database of its own on the project's PostgreSQL)
through the store's own functions (bench/web/_seed.py): `--jobs` jobs over six repositories
on GitHub and GitLab and a schedule, in every state, the newest of them a finished job of
`--steps` agent steps (each an action and its observation: test runs with about 3 KB of
pytest output, every tenth step an edit). Then starts the real server, `resolver serve` in a
process of its own on loopback, and fetches each page in turn over one keep-alive connection,
`--requests` times each after `--warm-up` rounds, timing each response's first byte on raw
sockets (bench/web/_ttfb.py). Pages are signed in with a session cookie made as the app's own
sign-in makes it:
- admin: an account RESOLVER_ADMINS names by id, who sees every job; their pages ask the forge
  only whether their token still holds, once RESOLVER_ACCESS_CACHE_SECONDS have passed;
- reader (skipped with `--no-reader`): nobody special, who sees the jobs of the repositories
  their GitHub token can read; a local GitHub (integrations/github/standin/api.py) answers the app's
  access checks, which it keeps RESOLVER_ACCESS_CACHE_SECONDS (60 s), so a longer run pays
  for them again.
Prints p50/p95/p99 of the time to first byte, p50 to the last byte, the body size and each
page's p50 as a multiple of `/healthz`'s. With `--throughput N`: N seconds of wrk per page at
`--connections`, with the server's CPU time per request. Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# Run by path: bench/web itself, the project, then bench/ (_load, ingress).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _load import Figures, free_port, measured, run_wrk, wait_until_answering
from _seed import seed
from _ttfb import Target, Timings, measure, percentile
from _viewers import ADMIN, ADMINS, READER, reader_forge, session_cookie
from cryptography.fernet import Fernet
from ingress import database, python_speed

from resolver.core.settings import get_settings
from resolver.store.migrate import upgrade
from tests.conftest import reset_caches

ROOT = Path(__file__).resolve().parents[2]
READABLE = ["octo/api", "octo/web"]
"""The repositories the reader's GitHub token can read (of the seeded six)."""


def bench_env(database_url: str, forge_url: str) -> dict[str, str]:
    return {
        "RESOLVER_DATABASE_URL": database_url,
        "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
        "RESOLVER_ADMINS": ADMINS,
        "RESOLVER_GITHUB_API_URL": forge_url,
        "RESOLVER_LOG_LEVEL": "INFO",
    }


def prepare(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Migrate and seed the database; the long job's id."""
    os.environ.update(env)
    reset_caches()  # the store reads the database above
    upgrade(env["RESOLVER_DATABASE_URL"])
    started = time.perf_counter()
    long_job = seed(args.jobs, args.steps)
    print(f"seeded {args.jobs:,} jobs and a {args.steps}-step job in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    return long_job


@contextlib.contextmanager
def server(tmp: Path, env: dict[str, str]) -> Iterator[tuple[int, int]]:
    """`resolver serve` on a free loopback port, in `tmp` (so no .env of the checkout applies):
    its pid and port, once `/healthz` answers."""
    port = free_port()
    command = [sys.executable, "-m", "resolver.cli", "serve", "--host", "127.0.0.1"]
    with (tmp / "server.log").open("wb") as log:
        process = subprocess.Popen(
            [*command, "--port", str(port)], env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
            cwd=tmp, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_answering("the server", port, "/healthz", process, tmp / "server.log", 120)
        yield process.pid, port
    finally:
        process.terminate()
        process.wait(timeout=10)


def targets(long_job: int, steps: int, reader: bool) -> list[Target]:
    """`/healthz` first (the baseline), then each page as each viewer."""
    settings = get_settings()
    pages = {
        "/jobs": "/jobs",
        "/jobs?state=failed": "/jobs?state=failed",
        f"/jobs/{{id}}, {steps} steps": f"/jobs/{long_job}",
    }
    found = [Target("/healthz", "/healthz")]
    for viewer in (ADMIN, READER) if reader else (ADMIN,):
        cookie = session_cookie(settings, viewer)
        found += [
            Target(f"{label} ({viewer.label})", path, cookie) for label, path in pages.items()
        ]
    return found


def ttfb_table(timings: dict[str, Timings], requests: int, warm_up: int) -> None:
    print(f"\ntime to first byte: {requests} GETs of each page, taking turns after {warm_up} "
          "rounds of warm-up, one keep-alive connection")  # fmt: skip
    print(f"{'':36}{'status':>7}{'KiB':>8}{'p50':>8}{'p95':>8}{'p99':>8}{'last p50':>10}"
          f"{'/healthz':>10}")  # fmt: skip
    base = percentile(timings["/healthz"].first_byte, 50)
    for label, found in timings.items():
        statuses = ",".join(str(code) for code in sorted(found.statuses))
        p50, p95, p99 = (percentile(found.first_byte, cut) for cut in (50, 95, 99))
        last = percentile(found.last_byte, 50)
        print(
            f"{label:36}{statuses:>7}{found.size / 1024:8.1f}{p50:8.2f}{p95:8.2f}{p99:8.2f}"
            f"{last:10.2f}{p50 / base:9.1f}x"
        )
    print("times in ms; /healthz: the page's p50 as a multiple of /healthz's p50")


def throughput(
    pid: int, port: int, tmp: Path, pages: list[Target], args: argparse.Namespace
) -> None:
    """wrk at a fixed number of connections, `args.throughput` seconds per page."""
    if shutil.which("wrk") is None:
        print("\nthroughput skipped: wrk is not installed (Debian: apt-get install wrk)")
        return
    print(f"\nthroughput: wrk, {args.connections} connections, {args.throughput} s per page")
    print(f"{'':36}{'req/s':>8}{'p50':>8}{'p99':>8}{'cpu ms':>8}{'of healthz':>12}")
    base = 0.0  # /healthz's, the first page
    for page in pages:
        script = tmp / "cookie.lua"
        script.write_text(f'wrk.headers["Cookie"] = "{page.cookie}"\n' if page.cookie else "")
        run_wrk(port, page.path, script, 1, args.connections)  # warm-up

        def run(path: str = page.path, script: Path = script) -> Figures:
            return run_wrk(port, path, script, args.throughput, args.connections)

        f = measured(pid, run, lambda figures: figures.requests_per_second * args.throughput)
        base = base or f.requests_per_second
        errors = f"  non-2xx: {f.errors}" if f.errors else ""
        print(f"{page.label:36}{f.requests_per_second:8.0f}{f.p50:8.1f}{f.p99:8.1f}"
              f"{f.cpu_ms:8.2f}{f.requests_per_second / base:12.1%}{errors}")  # fmt: skip
    print("latencies in ms; cpu ms: the server's CPU time per request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="measured GETs of each page")
    parser.add_argument("--warm-up", type=int, default=20, help="rounds before measuring")
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in the database")
    parser.add_argument("--steps", type=int, default=200, help="agent steps of the long job")
    parser.add_argument(
        "--throughput", type=int, default=0, help="seconds of wrk per page (0: none)"
    )
    parser.add_argument("--connections", type=int, default=8, help="wrk connections")
    parser.add_argument("--no-reader", action="store_true", help="measure the admin only")
    parser.add_argument(
        "--postgres", action="store_true", help="PostgreSQL (scripts/postgres) instead of SQLite"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-web-"))
    try:
        with database(tmp, args.postgres) as url:
            run(args, tmp, url)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, tmp: Path, database_url: str) -> None:
    forge = reader_forge(READABLE)
    try:
        env = bench_env(database_url, forge.base_url)
        long_job = prepare(args, env)
        with server(tmp, env) as (pid, port):
            pages = targets(long_job, args.steps, not args.no_reader)
            print(
                f"1 server process (resolver serve), {'PostgreSQL' if args.postgres else 'SQLite'}"
            )
            ttfb_table(
                measure(port, pages, args.requests, args.warm_up), args.requests, args.warm_up
            )
            if args.throughput:
                throughput(pid, port, tmp, pages, args)
        load = os.getloadavg()[0]
        print(f"this machine: sum(range(10**6)) in {python_speed():.0f} ms, load {load:.1f}")
    finally:
        forge.close()


if __name__ == "__main__":
    main()
