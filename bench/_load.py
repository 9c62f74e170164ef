"""Load generation for bench/ingress: wrk (with a Lua script giving every request a fresh
delivery id), an open-loop paced client and a closed-loop client, and the server's CPU time per
request beside each measurement."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import hashlib
import hmac
import http.client
import os
import re
import secrets
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import free_port as free_port  # a bench's servers' ports

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
LOG_TAIL = 4000
"""Characters of a server's log shown when it does not start."""


@dataclass(frozen=True)
class Signed:
    body: bytes
    signature: str
    event: str = "issue_comment"
    """The `X-GitHub-Event` header."""


def sign(body: bytes, secret: str, event: str = "issue_comment") -> Signed:
    """A GitHub delivery of `body`, signed with `secret` as GitHub signs it."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return Signed(body, f"sha256={digest}", event)


@dataclass(frozen=True)
class Figures:
    requests_per_second: float
    p50: float
    p90: float
    p99: float
    errors: int = 0
    cpu_ms: float = 0.0
    """The server process's CPU time (user + system, every thread) per request."""


def lua_script(path: str, signed: list[Signed], run: str) -> str:
    """A wrk script that cycles through the signed deliveries in order, with delivery ids unique
    to `run`. Each distinct delivery is written out once (a mix repeats its ignored events)."""
    distinct = list(dict.fromkeys(signed))
    number = {s: n for n, s in enumerate(distinct, 1)}
    bodies = ",\n".join(f"[==[{s.body.decode()}]==]" for s in distinct)
    signatures = ",\n".join(f'"{s.signature}"' for s in distinct)
    events = ",".join(f'"{s.event}"' for s in distinct)
    order = ",".join(str(number[s]) for s in signed)
    return f"""
local bodies = {{ {bodies} }}
local signatures = {{ {signatures} }}
local events = {{ {events} }}
local order = {{ {order} }}
local n, counter = #order, 0
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tag", tostring(threads)) end
function request()
  counter = counter + 1
  local i = order[(counter % n) + 1]
  local headers = {{
    ["Content-Type"] = "application/json",
    ["X-GitHub-Event"] = events[i],
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
        f"X-GitHub-Event: {signed.event}\r\nX-GitHub-Hook-ID: 1\r\n"
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
    run_id = secrets.token_hex(4)  # delivery ids new to the server, however often it is measured

    async def exchange(conn: Connection, request: bytes) -> int:
        conn[1].write(request)
        return await read_response(conn[0])

    async def one(i: int) -> None:
        nonlocal errors
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - loop.time()))
        request = request_bytes(path, signed[i % len(signed)], f"paced-{run_id}-{i}")
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
    run_id = secrets.token_hex(4)

    async def client(number: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sent = 0
        while loop.time() < deadline:
            started = loop.time()
            delivery = f"closed-{run_id}-{number}-{sent}"
            writer.write(request_bytes(path, signed[sent % len(signed)], delivery))
            errors += await read_response(reader) >= 300
            latencies.append((loop.time() - started) * 1000)
            sent += 1
        writer.close()

    started = loop.time()
    await asyncio.gather(*(client(n) for n in range(connections)))
    cuts = statistics.quantiles(latencies, n=100)
    return Figures(len(latencies) / (loop.time() - started), cuts[49], cuts[89], cuts[98], errors)


def answers(port: int, path: str, signed: list[Signed]) -> dict[str, int]:
    """The status code of one new delivery of each event in `signed`, sent one after another."""

    async def ask() -> dict[str, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        codes: dict[str, int] = {}
        run_id = secrets.token_hex(4)
        for one in signed:
            if one.event not in codes:
                writer.write(request_bytes(path, one, f"answer-{run_id}-{one.event}"))
                codes[one.event] = await read_response(reader)
        writer.close()
        return codes

    return asyncio.run(ask())


def max_throughput(
    pid: int, port: int, path: str, signed: list[Signed], script: Path, seconds: int, conns: int
) -> Figures:
    """wrk when installed (Debian's), else the Python closed-loop generator. wrk first warms
    the server up for 2 s (as long as the measurement, if shorter: a smoke run's second)."""
    wrk = shutil.which("wrk") is not None
    if wrk:
        # Each wrk run counts from zero: a run of its own keeps the measured requests new
        # deliveries, rather than copies of the warm-up's or an earlier measurement's (which are
        # cheaper to answer).
        run_id = secrets.token_hex(4)
        script.write_text(lua_script(path, signed, f"warm-up-{run_id}"))
        run_wrk(port, path, script, min(2, seconds), conns)
        script.write_text(lua_script(path, signed, f"measured-{run_id}"))

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


START_TIMEOUT = 120.0
"""Seconds a server a bench starts may take to answer: its start ends the wait as soon as it
answers, and a loaded host (CI beside other work) can take half a minute to import it."""


def wait_until_answering(
    what: str,
    port: int,
    path: str,
    process: subprocess.Popen[bytes],
    log: Path,
    timeout: float = START_TIMEOUT,
) -> None:
    """Until `GET path` on loopback answers 200. If `process` exits first, or the time runs
    out, stop the bench with the end of its log: that is where its error is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            connection.request("GET", path)
            if connection.getresponse().status == 200:
                return
        except (OSError, http.client.HTTPException):
            pass  # not listening yet
        finally:
            connection.close()
        time.sleep(0.1)
    code = process.poll()
    state = f"not answering after {timeout:g} s" if code is None else f"exit code {code}"
    end = log.read_text(errors="replace")[-LOG_TAIL:] if log.exists() else "(no log)"
    raise SystemExit(f"{what} did not start ({state}); the end of its output:\n{end}")


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
    """Run a measurement and add the server's CPU time per request to its figures. The load
    generator's own heap (a bench imports the app to prepare its data) is frozen first: a full
    pass of its collector, tens of milliseconds, would otherwise land in a server's latencies."""
    gc.collect()
    gc.freeze()
    before = cpu_seconds(pid)
    figures = run()
    cpu_ms = (cpu_seconds(pid) - before) * 1000 / max(requests(figures), 1)
    return dataclasses.replace(figures, cpu_ms=cpu_ms)
