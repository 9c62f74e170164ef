"""What tracing costs: the webhook ingress and the agent loop with traces off and on, in one run,
side by side (goal: under 5%).

    uv run python bench/tracing.py [--duration 10] [--rate 200] [--steps 40] [--rounds 3]

Traces go over OTLP/HTTP to a receiver in this process (tests/support/otlp_receiver.py), which
decodes every export as a collector would; the spans it received are counted.
- Ingress: bench/ingress.py's server (one uvicorn process, SQLite, the real
  `POST /webhooks/github`), started with traces off, on for every request
  (OTEL_TRACES_SAMPLER_ARG=1), and on as by default (one trace in ten), one after the other, in
  rounds; each gets the same signed
  mentions at a fixed rate (open loop) and then as fast as it answers. Printed, the median over
  the rounds: p50 and p99 latency, the server's CPU time per request, the throughput.
- Agent loop: bench/agent.py's loop (a real sandbox, the instant scripted model), run in rounds
  that alternate off and on; printed per step, the median over the rounds of its time less the
  model server's.
Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
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
SAMPLED = "default"
"""The ingress traced as by default (observability.DEFAULT_RATIO): one trace in ten."""


def traced_env(endpoint: str, ratio: str = "1") -> dict[str, str]:
    """Traces to `endpoint`, `ratio` of them kept (empty: the default)."""
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER_ARG": ratio}


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
            wait_until_answering(f"the {name} server", port, "/healthz", proc, log_path)
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
    extras = {"off": {}, "on": traced_env(endpoint), SAMPLED: traced_env(endpoint, "")}
    runs: dict[str, list[tuple[Figures, Figures]]] = {mode: [] for mode in extras}
    for _ in range(args.rounds):
        for mode, extra in extras.items():
            redis.Redis.from_url(ingress.REDIS).flushdb()
            with server({**env, **extra}, tmp, mode.replace(" ", "-")) as (pid, port):
                path = ingress.ENDPOINTS["ingress"]
                paced = fixed_rate(pid, port, path, signed, args.rate, args.duration)
                most = max_throughput(pid, port, path, signed, script, args.duration, 16)
                runs[mode].append((paced, most))
    redis.Redis.from_url(ingress.REDIS).flushdb()
    return {
        mode: (median([p for p, _ in found]), median([m for _, m in found]))
        for mode, found in runs.items()
    }


def median(runs: list[Figures]) -> Figures:
    """Each figure's median over the rounds."""
    fields = [field.name for field in dataclasses.fields(Figures)]
    return Figures(**{name: statistics.median(getattr(f, name) for f in runs) for name in fields})


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
    return f"{(on - off) / off:+8.1%}" if off else f"{'-':>8}"


def report(ingress_figures: dict[str, tuple[Figures, Figures]], agent: dict[str, float]) -> None:
    """Side by side; each change is against off."""
    print(f"{'':30}{'off':>9}{'on, all':>9}{'change':>8}{SAMPLED:>9}{'change':>8}")

    def line(label: str, values: list[float], digits: int) -> None:
        cells = f"{values[0]:9.{digits}f}"
        for value in values[1:]:
            cells += f"{value:9.{digits}f}{change(values[0], value)}"
        print(f"  {label:28}{cells}")

    rows = [ingress_figures[mode] for mode in (*MODES, SAMPLED)]
    print("ingress, fixed rate (open loop)")
    line("p50 ms", [paced.p50 for paced, _ in rows], 2)
    line("p99 ms", [paced.p99 for paced, _ in rows], 2)
    line("server cpu ms/request", [paced.cpu_ms for paced, _ in rows], 3)
    print("ingress, max throughput")
    line("requests/s", [most.requests_per_second for _, most in rows], 0)
    line("server cpu ms/request", [most.cpu_ms for _, most in rows], 3)
    print("agent loop, per step (less the model server)")
    line("ms per step", [agent[mode] * 1000 for mode in MODES], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per ingress measurement")
    parser.add_argument("--rate", type=float, default=200.0, help="fixed rate, requests/s")
    parser.add_argument("--senders", type=int, default=50, help="distinct linked senders")
    parser.add_argument("--steps", type=int, default=40, help="agent steps per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every mode")
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
