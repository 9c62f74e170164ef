"""Webhook ingress under load: a signed GitHub mention against a bare 204 endpoint.

    uv run python bench/ingress.py [--duration 10] [--rate 200] [--senders 50]

Starts one real server process (uvicorn, the real app plus a bare `POST /bare` that reads the
body and answers 204) on loopback, with its own SQLite database and Redis db 7. Then, for both
endpoints:
1. maximum throughput with wrk (Debian's; a Python closed-loop generator when wrk is missing)
   and a Lua script that signs nothing at run time but gives every request a fresh
   `X-GitHub-Delivery`, so each one creates and publishes a job;
2. latency at a fixed rate (default 200 requests/s) with an open-loop Python load generator,
   timed from each request's scheduled send time, so a slow server cannot hide its queue.
Prints throughput, p50/p90/p99 and the server's CPU time per request side by side, and the
ratio. CPU time per request moves less than throughput when other work shares the machine.
Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "integrations/github/fixtures/issue_comment.created__on_issue.json"
SECRET = "bench-webhook-secret"
REDIS = "redis://127.0.0.1:6379/7"
APP_PATH, BARE_PATH = "/webhooks/github", "/bare"


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@dataclass(frozen=True)
class Signed:
    body: bytes
    signature: str


@dataclass(frozen=True)
class Figures:
    requests_per_second: float
    p50: float
    p90: float
    p99: float
    errors: int = 0
    cpu_ms: float = 0.0
    """The server process's CPU time (user + system, every thread) per request."""


def bench_env(tmp: Path) -> dict[str, str]:
    from cryptography.fernet import Fernet

    return {
        **os.environ,
        "RESOLVER_DATABASE_URL": f"sqlite:///{tmp / 'bench.db'}",
        "RESOLVER_REDIS_URL": REDIS,
        "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
        "RESOLVER_GITHUB_WEBHOOK_SECRET": SECRET,
        "RESOLVER_LOG_LEVEL": "INFO",
    }


def bench_app() -> Any:
    """The real app plus the bare endpoint (uvicorn imports this in each worker process)."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from resolver.app import create_app
    from resolver.config import get_settings
    from resolver.logs import configure_logging

    async def bare(request: Request) -> Response:
        await request.body()
        return Response(status_code=204)

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    app = create_app()
    app.router.routes.append(Route(BARE_PATH, bare, methods=["POST"]))
    return app


def serve(port: int, workers: int) -> None:
    """The server: `workers` uvicorn processes serving both endpoints on one port."""
    import uvicorn

    sys.path.insert(0, str(Path(__file__).parent))
    uvicorn.run(
        "ingress:bench_app", factory=True, host="127.0.0.1", port=port, workers=workers,
        log_config=None, access_log=False,
    )  # fmt: skip


def prepare(env: dict[str, str], senders: int) -> list[Signed]:
    """Migrate, link `senders` GitHub accounts, and sign one mention from each."""
    os.environ.update(env)
    from resolver.accounts import add_user, link_identity
    from resolver.db import session_scope
    from resolver.migrate import upgrade

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
            body = json.dumps(payload).encode()
            digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            signed.append(Signed(body, f"sha256={digest}"))
    return signed


def lua_script(path: str, signed: list[Signed], run: str) -> str:
    """A wrk script that cycles through the signed bodies with delivery ids unique to `run`."""
    bodies = ",\n".join(f"[==[{s.body.decode()}]==]" for s in signed)
    signatures = ",\n".join(f'"{s.signature}"' for s in signed)
    return f"""
local bodies = {{ {bodies} }}
local signatures = {{ {signatures} }}
local n, counter = #bodies, 0
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tag", tostring(threads)) end
function request()
  counter = counter + 1
  local i = (counter % n) + 1
  local headers = {{
    ["Content-Type"] = "application/json",
    ["X-GitHub-Event"] = "issue_comment",
    ["X-GitHub-Hook-ID"] = "1",
    ["X-GitHub-Delivery"] = "wrk-{run}-" .. tag .. "-" .. counter,
    ["X-Hub-Signature-256"] = signatures[i],
  }}
  return wrk.format("POST", "{path}", headers, bodies[i])
end
"""


def run_wrk(port: int, path: str, script: Path, seconds: int, connections: int) -> Figures:
    command = [
        "wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script),
        f"http://127.0.0.1:{port}{path}",
    ]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)

    def percentile(label: str) -> float:
        found = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        value, unit = float(found.group(1)), found.group(2)  # type: ignore[union-attr]
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    return Figures(
        rate, percentile("50"), percentile("90"), percentile("99"),
        int(errors.group(1)) if errors else 0,
    )  # fmt: skip


def request_bytes(path: str, signed: Signed, delivery: str) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: issue_comment\r\nX-GitHub-Hook-ID: 1\r\n"
        f"X-GitHub-Delivery: {delivery}\r\nX-Hub-Signature-256: {signed.signature}\r\n"
        f"Content-Length: {len(signed.body)}\r\n\r\n"
    )
    return head.encode() + signed.body


async def read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = re.search(rb"(?i)content-length:\s*(\d+)", head)
    if length:
        await reader.readexactly(int(length.group(1)))
    return status


async def paced(port: int, path: str, signed: list[Signed], rate: float, seconds: float) -> Figures:
    """Open loop: request i is due at start + i/rate; latency counts from that moment."""
    loop = asyncio.get_running_loop()
    idle: list[Connection] = []
    latencies: list[float] = []
    errors = 0
    total = int(rate * seconds)
    start = loop.time() + 0.2

    async def exchange(conn: Connection, request: bytes) -> int:
        conn[1].write(request)
        return await read_response(conn[0])

    async def one(i: int) -> None:
        nonlocal errors
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - loop.time()))
        request = request_bytes(path, signed[i % len(signed)], f"paced-{rate:g}-{path}-{i}")
        conn = idle.pop() if idle else await asyncio.open_connection("127.0.0.1", port)
        try:
            status = await exchange(conn, request)
        except (ConnectionError, asyncio.IncompleteReadError):
            # An idle connection the server closed (its keep-alive timeout): send on a new one.
            conn = await asyncio.open_connection("127.0.0.1", port)
            status = await exchange(conn, request)
        latencies.append((loop.time() - due) * 1000)
        errors += status >= 300
        idle.append(conn)

    await asyncio.gather(*(one(i) for i in range(total)))
    elapsed = loop.time() - start
    for _, writer in idle:
        writer.close()
    cuts = statistics.quantiles(latencies, n=100)
    return Figures(total / elapsed, cuts[49], cuts[89], cuts[98], errors)


async def closed_loop(
    port: int, path: str, signed: list[Signed], connections: int, seconds: float
) -> Figures:
    """Without wrk: `connections` clients each send their next request as soon as answered."""
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    errors = 0
    deadline = loop.time() + seconds

    async def client(number: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sent = 0
        while loop.time() < deadline:
            started = loop.time()
            delivery = f"closed-{path}-{number}-{sent}"
            writer.write(request_bytes(path, signed[sent % len(signed)], delivery))
            errors += await read_response(reader) >= 300
            latencies.append((loop.time() - started) * 1000)
            sent += 1
        writer.close()

    started = loop.time()
    await asyncio.gather(*(client(n) for n in range(connections)))
    cuts = statistics.quantiles(latencies, n=100)
    return Figures(len(latencies) / (loop.time() - started), cuts[49], cuts[89], cuts[98], errors)


def max_throughput(
    pid: int, port: int, path: str, signed: list[Signed], script: Path, seconds: int, conns: int
) -> Figures:
    """wrk when installed (Debian's), else the Python closed-loop generator."""
    wrk = shutil.which("wrk") is not None
    if wrk:
        # Each wrk run counts from zero: a run of its own keeps the measured requests new
        # deliveries, rather than copies of the warm-up's (which are cheaper to answer).
        script.write_text(lua_script(path, signed, "warm-up"))
        run_wrk(port, path, script, 2, conns)
        script.write_text(lua_script(path, signed, "measured"))

    def run() -> Figures:
        if wrk:
            return run_wrk(port, path, script, seconds, conns)
        return asyncio.run(closed_loop(port, path, signed, conns, seconds))

    return measured(pid, run, lambda figures: figures.requests_per_second * seconds)


def fixed_rate(
    pid: int, port: int, path: str, signed: list[Signed], rate: float, seconds: int
) -> Figures:
    def run() -> Figures:
        return asyncio.run(paced(port, path, signed, rate, seconds))

    return measured(pid, run, lambda _: rate * seconds)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process and its worker processes have used so far (Linux
    /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(int(child)) for child in children)


def measured(pid: int, run: Callable[[], Figures], requests: Callable[[Figures], float]) -> Figures:
    """Run a measurement and add the server's CPU time per request to its figures."""
    before = cpu_seconds(pid)
    figures = run()
    cpu_ms = (cpu_seconds(pid) - before) * 1000 / max(requests(figures), 1)
    return dataclasses.replace(figures, cpu_ms=cpu_ms)


def wait_for(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def table(rows: dict[str, tuple[Figures, Figures]]) -> None:
    print(f"{'':34}{'ingress':>40}{'bare 204':>40}{'ratio':>8}")
    for label, (app, bare) in rows.items():
        cells = [
            f"{f.requests_per_second:7.0f} req/s  p50 {f.p50:5.1f}  p90 {f.p90:5.1f}  "
            f"p99 {f.p99:5.1f}  cpu {f.cpu_ms:4.2f}"
            for f in (app, bare)
        ]
        ratio = app.requests_per_second / bare.requests_per_second
        print(f"{label:34}{cells[0]:>40}{cells[1]:>40}{ratio:8.0%}")
        if app.errors or bare.errors:
            print(f"{'':34}non-2xx: ingress {app.errors}, bare {bare.errors}")
    print("latencies in ms; cpu: the server's CPU time per request, in ms")


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
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.workers)
    import redis

    tmp = Path(tempfile.mkdtemp(prefix="bench-ingress-"))
    env = bench_env(tmp)
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
        wait_for(port)
        rows: dict[str, tuple[Figures, Figures]] = {}
        app, bare = (
            max_throughput(server.pid, port, path, signed, script, args.duration, args.connections)
            for path in (APP_PATH, BARE_PATH)
        )
        tool = "wrk" if shutil.which("wrk") else "python"
        rows[f"max throughput ({tool}, {args.connections} conns)"] = (app, bare)
        for rate in (float(r) for r in args.rate.split(",")):
            app, bare = (
                fixed_rate(server.pid, port, path, signed, rate, args.duration)
                for path in (APP_PATH, BARE_PATH)
            )
            rows[f"fixed {rate:.0f} req/s (open loop)"] = (app, bare)
        print(f"{args.workers} server process{'es' if args.workers > 1 else ''}")
        table(rows)
        load = os.getloadavg()[0]
        print(f"this machine: sum(range(10**6)) in {python_speed():.0f} ms, load {load:.1f}")
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
        redis.Redis.from_url(REDIS).flushdb()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
