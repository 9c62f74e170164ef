"""What tracing costs: the webhook ingress and the agent loop with traces off and on, in one run,
side by side (goal: under 5%).

    uv run python bench/tracing.py [--duration 10] [--rate 200] [--steps 40] [--rounds 3]

Traces go over OTLP/HTTP to a receiver in this process (tests/support/otlp_receiver.py), which
decodes every export as a collector would; the spans it received are counted.
- Ingress: bench/ingress.py's server (one uvicorn process, SQLite, the real
  `POST /webhooks/github`), started once with traces off and once on, one after the other; each
  gets the same signed mentions at a fixed rate (open loop) and then as fast as it answers.
  Printed: p50 and p99 latency, the server's CPU time per request, the throughput.
- Agent loop: bench/agent.py's loop (a real sandbox, the instant scripted model), run in rounds
  that alternate off and on; printed per step, the median over the rounds of its time less the
  model server's.
Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

import agent as agent_bench
import ingress
from _load import Figures, Signed, fixed_rate, free_port, max_throughput, wait_until_answering

from tests.support.llm_server import ScriptedLLMServer
from tests.support.otlp_receiver import otlp_receiver

MODES = ("off", "on")


def traced_env(endpoint: str) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}


@contextmanager
def server(env: dict[str, str], tmp: Path, name: str) -> Iterator[tuple[int, int]]:
    """bench/ingress.py's server on a free port: its pid and port."""
    port = free_port()
    log_path = tmp / f"server-{name}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, ingress.__file__, "--serve", str(port), "--workers", "1"],
            env=env, stderr=log, stdout=log,
        )  # fmt: skip
        try:
            wait_until_answering(f"the {name} server", port, "/healthz", proc, log_path, 60)
            yield proc.pid, port
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def bench_ingress(
    args: argparse.Namespace, tmp: Path, endpoint: str
) -> dict[str, tuple[Figures, Figures]]:
    """By mode: the fixed-rate figures and the max-throughput figures."""
    import redis

    env = ingress.bench_env(f"sqlite:///{tmp / 'ingress.db'}")
    signed: list[Signed] = ingress.prepare(env, args.senders)
    script = tmp / "post.lua"
    found = {}
    for mode in MODES:
        redis.Redis.from_url(ingress.REDIS).flushdb()
        extra = traced_env(endpoint) if mode == "on" else {}
        with server({**env, **extra}, tmp, mode) as (pid, port):
            path = ingress.ENDPOINTS["ingress"]
            paced = fixed_rate(pid, port, path, signed, args.rate, args.duration)
            most = max_throughput(pid, port, path, signed, script, args.duration, 16)
            found[mode] = (paced, most)
    redis.Redis.from_url(ingress.REDIS).flushdb()
    return found


def bench_agent(args: argparse.Namespace, tmp: Path, endpoint: str) -> dict[str, float]:
    """By mode: the median over the rounds of the loop's seconds per step, less the model's."""
    from resolver import observability
    from resolver.core.settings import get_settings
    from resolver.store.migrate import upgrade

    llm = ScriptedLLMServer([]).start()
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    try:
        agent_bench.configure(tmp, llm)
        get_settings.cache_clear()  # the ingress part read its own
        upgrade(os.environ["RESOLVER_DATABASE_URL"])
        for _ in range(args.rounds):
            for mode in MODES:
                if mode == "on":
                    os.environ.update(traced_env(endpoint))
                    observability.install("bench-agent")
                figures = agent_bench.bench_loop(llm, args.steps)
                observability.shutdown()
                os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
                seconds[mode].append(figures.total - figures.llm_server)
    finally:
        llm.stop()
    return {mode: statistics.median(values) for mode, values in seconds.items()}


def change(off: float, on: float) -> str:
    return f"{(on - off) / off:+7.1%}" if off else "      -"


def report(ingress_figures: dict[str, tuple[Figures, Figures]], agent: dict[str, float]) -> None:
    print(f"{'':34}{'off':>9}{'on':>9}{'change':>9}")
    off, on = ingress_figures["off"], ingress_figures["on"]
    print("ingress, fixed rate (open loop)")
    for label, key in (("p50 ms", "p50"), ("p99 ms", "p99"), ("server cpu ms/request", "cpu_ms")):
        a, b = getattr(off[0], key), getattr(on[0], key)
        print(f"  {label:32}{a:9.2f}{b:9.2f}{change(a, b)}")
    print("ingress, max throughput")
    a, b = off[1].requests_per_second, on[1].requests_per_second
    print(f"  {'requests/s':32}{a:9.0f}{b:9.0f}{change(a, b)}")
    a, b = off[1].cpu_ms, on[1].cpu_ms
    print(f"  {'server cpu ms/request':32}{a:9.2f}{b:9.2f}{change(a, b)}")
    print("agent loop, per step (less the model server)")
    a, b = agent["off"] * 1000, agent["on"] * 1000
    print(f"  {'ms per step':32}{a:9.1f}{b:9.1f}{change(a, b)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per ingress measurement")
    parser.add_argument("--rate", type=float, default=200.0, help="fixed rate, requests/s")
    parser.add_argument("--senders", type=int, default=50, help="distinct linked senders")
    parser.add_argument("--steps", type=int, default=40, help="agent steps per round")
    parser.add_argument("--rounds", type=int, default=3, help="agent rounds per mode")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-tracing-"))
    for part in ("ingress", "agent"):
        (tmp / part).mkdir()
    try:
        with otlp_receiver() as (receiver, endpoint):
            ingress_figures = bench_ingress(args, tmp / "ingress", endpoint)
            agent = bench_agent(args, tmp / "agent", endpoint)
            spans = len(receiver.spans)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(ingress_figures, agent)
    print(f"spans received over OTLP/HTTP: {spans}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
