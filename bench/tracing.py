"""What tracing costs: the server's CPU time per webhook and the agent loop's CPU time per step,
with traces off and on, measured at the same time in one run (goal: under 5%).

    uv run python bench/tracing.py [--rounds 15] [--block 3] [--rate 100] [--steps 8]

The figure is CPU time, not wall time: on a shared machine the load moves wall times by tens
of percent, and CPU time less. Every mode runs in a process of its own, all of them at once and
on the same work, in rounds; each round gives each mode's change against off in that round, so
a change of load falls on every mode alike. Printed: each mode's median, and of its changes the
median over the rounds, the middle half and the extremes. `off, again` is a second process with
traces off: its change against off is the noise, and a smaller change than that is not seen.
- Ingress: bench/ingress.py's server (uvicorn, SQLite, the real `POST /webhooks/github`), one
  per mode, each with its own database: traces off (twice), on with no job sampled
  (OTEL_TRACES_SAMPLER_ARG=0: what tracing costs beside its spans), on as by default (one job
  in ten), and on for every job (OTEL_TRACES_SAMPLER_ARG=1). A round sends each the same
  signed mentions at a fixed rate (open loop) for `--block` seconds; its figure is the server's
  CPU time (every thread, in nanoseconds from /proc) per request.
- Agent loop: bench/agent.py's loop (a real sandbox, the instant scripted model), one process per
  mode, each a job whose trace is off (twice), not sampled (nine jobs in ten by default) or
  sampled. A round is `--steps` steps in each; its figure is the process's CPU time per step.
  The default's change is nine tenths of the unsampled one's plus a tenth of the sampled one's.
Traces go over OTLP/HTTP to a receiver in a process of its own (tests/support/otlp_receiver.py,
which decodes every export as a collector would), so its work is in no figure.
Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

import agent as agent_bench
import ingress
from _load import Figures, Signed, free_port, paced, wait_until_answering

from tests.support.llm_server import ScriptedLLMServer

CONTROL = "off, again"
INGRESS_MODES = {
    "off": None, CONTROL: None, "none sampled": "0", "default": "", "every job": "1"
}  # fmt: skip
"""Each server's OTEL_TRACES_SAMPLER_ARG (None: traces off; empty: the default, one in ten)."""
AGENT_MODES = {"off": None, CONTROL: None, "not sampled": False, "sampled": True}
"""Whether each loop's job is sampled (None: traces off)."""
# RESOLVER_BENCH_REDIS: a Redis db of the run's own, where several benches share a host.
REDIS = os.environ.get("RESOLVER_BENCH_REDIS", "redis://127.0.0.1:6379/8")
"""A database of its own by default: bench/ingress.py empties db 7."""
RECEIVER = """
import sys
from tests.support.otlp_receiver import otlp_receiver
with otlp_receiver() as (receiver, endpoint):
    print(endpoint, flush=True)
    sys.stdin.read()
    print(len(receiver.spans), flush=True)
"""


@contextmanager
def receiver_process() -> Iterator[tuple[str, list[int]]]:
    """The OTLP receiver in a process of its own: its endpoint, and (once closed) the number of
    spans it received."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", RECEIVER], cwd=root, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    received: list[int] = []
    try:
        yield proc.stdout.readline().strip(), received
    finally:
        proc.stdin.close()
        received.append(int(proc.stdout.readline() or 0))
        proc.wait(timeout=30)


def traced_env(endpoint: str, ratio: str) -> dict[str, str]:
    """Traces to `endpoint`, `ratio` of the jobs kept (empty: the default)."""
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER_ARG": ratio}


def cpu_ns(pid: int) -> int:
    """The CPU time of every thread of a process so far, in nanoseconds (/proc/…/schedstat):
    finer than the clock ticks of /proc/…/stat, which would round a block by a percent."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(OSError, IndexError, ValueError):  # a thread that ended meanwhile
            total += int((task / "schedstat").read_text().split()[0])
    return total


@contextmanager
def servers(envs: dict[str, dict[str, str]], tmp: Path) -> Iterator[dict[str, tuple[int, int]]]:
    """bench/ingress.py's server for each mode's env, on free ports, all started at once (a
    start is mostly imports): by mode, its pid and port."""
    with ExitStack() as stack:
        starting: dict[str, tuple[subprocess.Popen[bytes], int, Path]] = {}
        for mode, env in envs.items():
            port = free_port()  # a port of this process's own, however many it takes
            log_path = tmp / f"server-{mode.replace(' ', '-')}.log"
            log = stack.enter_context(log_path.open("w"))
            proc = subprocess.Popen(
                [sys.executable, ingress.__file__, "--serve", str(port), "--workers", "1"],
                env=env, stderr=log, stdout=log,
            )  # fmt: skip
            stack.callback(proc.wait, timeout=30)
            stack.callback(proc.terminate)
            starting[mode] = (proc, port, log_path)
        for mode, (proc, port, log_path) in starting.items():
            wait_until_answering(f"the {mode} server", port, "/healthz", proc, log_path)
        yield {mode: (proc.pid, port) for mode, (proc, port, _) in starting.items()}


def turned(modes: Sequence[str], number: int) -> list[str]:
    """The modes in the order of round `number`: turned by one each round."""
    shift = number % len(modes)
    return [*modes[shift:], *modes[:shift]]


def bench_ingress(args: argparse.Namespace, tmp: Path, endpoint: str) -> dict[str, list[float]]:
    """By mode, the server's CPU milliseconds per request in each round."""
    import redis

    template = tmp / "ingress.db"
    env = {**ingress.bench_env(f"sqlite:///{template}"), "RESOLVER_REDIS_URL": REDIS}
    signed: list[Signed] = ingress.prepare(env, args.senders)
    envs = {}
    for number, (mode, ratio) in enumerate(INGRESS_MODES.items()):
        database = tmp / f"ingress-{number}.db"  # a database for each server, alike
        shutil.copyfile(template, database)
        own = {**env, "RESOLVER_DATABASE_URL": f"sqlite:///{database}"}
        envs[mode] = own if ratio is None else {**own, **traced_env(endpoint, ratio)}
    redis.Redis.from_url(REDIS).flushdb()
    cpu: dict[str, list[float]] = {mode: [] for mode in INGRESS_MODES}
    with ExitStack() as stack:
        running = stack.enter_context(servers(envs, tmp))
        at_once(running, signed, args.rate, 1)  # warm-up: imports, connections, first batches
        for number in range(args.rounds):
            order = {mode: running[mode] for mode in turned(list(running), number)}
            for mode, seconds in at_once(order, signed, args.rate, args.block).items():
                cpu[mode].append(seconds * 1000 / (args.rate * args.block))
    redis.Redis.from_url(REDIS).flushdb()
    return cpu


def at_once(
    servers: dict[str, tuple[int, int]], signed: list[Signed], rate: int, seconds: int
) -> dict[str, float]:
    """Send every server the same mentions at the same time, each at `rate`: each server's CPU
    seconds meanwhile."""
    path = ingress.ENDPOINTS["ingress"]

    async def send() -> list[Figures]:
        return await asyncio.gather(
            *(paced(port, path, signed, rate, seconds) for _, port in servers.values())
        )

    before = {mode: cpu_ns(pid) for mode, (pid, _) in servers.items()}
    for mode, figures in zip(servers, asyncio.run(send()), strict=True):
        if figures.errors:
            raise SystemExit(f"the {mode} server answered {figures.errors} requests in error")
    return {mode: (cpu_ns(pid) - before[mode]) / 1e9 for mode, (pid, _) in servers.items()}


def bench_agent(args: argparse.Namespace, tmp: Path, endpoint: str) -> dict[str, list[float]]:
    """By mode, its process's CPU milliseconds per agent step in each round: a process per mode
    (`--agent-job`), all running their loops at the same time, round after round."""
    from resolver.store.migrate import upgrade

    template = tmp / "bench.db"
    upgrade(f"sqlite:///{template}")
    for mode in AGENT_MODES:  # each loop's folder, with a database like the others'
        (tmp / folder(mode)).mkdir()
        shutil.copyfile(template, tmp / folder(mode) / "bench.db")
    cpu: dict[str, list[float]] = {mode: [] for mode in AGENT_MODES}
    with ExitStack() as stack:
        children = {
            mode: stack.enter_context(agent_process(mode, args.steps, tmp, endpoint))
            for mode in AGENT_MODES
        }
        for mode, child in children.items():  # started at once, each then waited for
            if child.stdout is None or child.stdout.readline().strip() != "ready":
                raise SystemExit(f"the agent loop {mode!r} did not start")
        for number in range(args.rounds):
            for mode in turned(list(children), number):
                children[mode].stdin.write("go\n")  # type: ignore[union-attr]
                children[mode].stdin.flush()  # type: ignore[union-attr]
            for mode, child in children.items():
                cpu[mode].append(float(child.stdout.readline()))  # type: ignore[union-attr]
    return cpu


@contextmanager
def agent_process(
    mode: str, steps: int, tmp: Path, endpoint: str
) -> Iterator[subprocess.Popen[str]]:
    """This bench as `--agent-job MODE`, started: once it prints `ready` (its warm-up done), a
    line in, a figure out."""
    env = dict(os.environ)
    if AGENT_MODES[mode] is not None:
        env.update(traced_env(endpoint, ""))
    command = [sys.executable, __file__, "--agent-job", mode, "--steps", str(steps)]
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=tmp / folder(mode),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=120)


def folder(mode: str) -> str:
    return mode.replace(" ", "-").replace(",", "")


def agent_job(mode: str, steps: int) -> None:
    """The loop's side of `agent_process`: for each line in, one run of the loop as a job of a
    trace of `mode`, and its CPU milliseconds per step out."""
    from resolver import observability
    from resolver.store.migrate import upgrade

    llm = ScriptedLLMServer([]).start()
    try:
        agent_bench.configure(Path.cwd(), llm)
        upgrade(os.environ["RESOLVER_DATABASE_URL"])
        observability.install("bench-agent")  # None when off
        agent_bench.bench_loop(llm, 2)  # warm-up: imports, the image, the first spans
        print("ready", flush=True)
        for _ in sys.stdin:
            figures = agent_bench.bench_loop(llm, steps, job_trace(AGENT_MODES[mode] is True))
            print(figures.cpu * 1000, flush=True)
    finally:
        observability.shutdown()
        llm.stop()


def job_trace(sampled: bool) -> tuple[tuple[str, str], ...]:
    """The trace context a job's message brings to a worker, sampled or not."""
    trace_id, span_id = random.getrandbits(128) | 1, random.getrandbits(64) | 1
    return (("traceparent", f"00-{trace_id:032x}-{span_id:016x}-{int(sampled):02x}"),)


def report(ingress_cpu: dict[str, list[float]], agent_cpu: dict[str, list[float]]) -> None:
    """Each mode's median; its change against off over all rounds together (a cost that comes in
    bursts, as the exporter's, counts in full); and its change against off in each round: the
    median over the rounds and the spread. `off, again` is off against itself: the noise."""
    rounds = len(ingress_cpu["off"])
    print(f"CPU time; {rounds} rounds, each measuring every mode at the same time")
    print(f"{'':16}{'cpu ms':>8}{'overall':>9}   change per round: median, middle half, all")
    print("ingress, fixed rate: the server's CPU per request")
    for mode, cpu in ingress_cpu.items():
        print(line(mode, cpu, ingress_cpu["off"]))
    print("agent loop, per step: its process's CPU (model server in process)")
    for mode, cpu in agent_cpu.items():
        print(line(mode, cpu, agent_cpu["off"]))
    default = [
        0.9 * quiet + 0.1 * traced
        for quiet, traced in zip(
            changes(agent_cpu["not sampled"], agent_cpu["off"]),
            changes(agent_cpu["sampled"], agent_cpu["off"]),
            strict=True,
        )
    ]
    overall = [
        sum(agent_cpu[mode]) / sum(agent_cpu["off"]) - 1 for mode in ("not sampled", "sampled")
    ]
    computed = 0.9 * overall[0] + 0.1 * overall[1]
    print(
        f"  {'default':14}{'':8}{computed:+9.1%}   {spread(default)}"
        "   (9/10 not sampled + 1/10 sampled)"
    )


def line(mode: str, cpu: list[float], off: list[float]) -> str:
    cells = f"  {mode:14}{statistics.median(cpu):8.3f}"
    if cpu is off:
        return cells
    return f"{cells}{sum(cpu) / sum(off) - 1:+9.1%}   {spread(changes(cpu, off))}"


def changes(cpu: list[float], off: list[float]) -> list[float]:
    """Each round's change against off in the same round."""
    return [(on - base) / base for base, on in zip(off, cpu, strict=True)]


def spread(values: list[float]) -> str:
    """The median, the middle half and the extremes, as percentages."""
    if len(values) < 2:
        return f"{values[0]:+7.1%}"
    low, _, high = statistics.quantiles(values, n=4, method="inclusive")
    return (
        f"{statistics.median(values):+7.1%}   {low:+.1%} … {high:+.1%},"
        f"   {min(values):+.1%} … {max(values):+.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds of every mode")
    parser.add_argument("--block", type=int, default=3, help="seconds of ingress per round")
    parser.add_argument("--rate", type=int, default=100, help="fixed rate, requests/s per server")
    parser.add_argument("--senders", type=int, default=50, help="distinct linked senders")
    parser.add_argument("--steps", type=int, default=8, help="agent steps per round")
    parser.add_argument("--agent-job", choices=AGENT_MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent_job:
        return agent_job(args.agent_job, args.steps)
    tmp = Path(tempfile.mkdtemp(prefix="bench-tracing-"))
    for part in ("ingress", "agent"):
        (tmp / part).mkdir()
    try:
        with receiver_process() as (endpoint, received):
            ingress_cpu = bench_ingress(args, tmp / "ingress", endpoint)
            agent_cpu = bench_agent(args, tmp / "agent", endpoint)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(ingress_cpu, agent_cpu)
    print(f"spans received over OTLP/HTTP: {received[0]}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
