"""Sandbox figures: exec latency against the `docker exec` CLI, cold start against a warm claim,
taking a change out (exporter, stop, checked read) against the old host-side `git diff`, the
memory of idle sandboxes, and runc beside gVisor's runsc (when the engine has it) on a start,
a claim, an exec, a file-heavy and a CPU-bound step. Run with `uv run python bench/sandboxes.py`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from sandbox import (
    ExportLimits,
    Sandbox,
    SandboxPolicy,
    WarmPool,
    ensure_image,
    open_sandbox,
)
from sandbox.runtime import RuntimeMissingError, engine_runtimes

MEMORY_USAGE = (
    "cat /sys/fs/cgroup/memory/memory.usage_in_bytes 2>/dev/null"
    " || cat /sys/fs/cgroup/memory.current"
)
HEADER = f"{'figure (ms)':<34} {'median':>9} {'p95':>9} {'docker exec':>11} {'p95':>9} {'ratio':>7}"


def timings(action: Callable[[], object], count: int) -> list[float]:
    """Wall-clock seconds of `count` calls of `action`."""
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def row(name: str, ours: list[float], baseline: list[float] | None = None) -> str:
    line = f"{name:<34} {statistics.median(ours) * 1000:9.1f} {p95(ours) * 1000:9.1f}"
    if baseline is None:
        return line
    ratio = statistics.median(ours) / statistics.median(baseline)
    return (
        line
        + f" {statistics.median(baseline) * 1000:11.1f} {p95(baseline) * 1000:9.1f} {ratio:7.2f}"
    )


def exec_latency(box: Sandbox, count: int) -> list[str]:
    """`Sandbox.run` against `docker exec` of the same command, as the same user."""
    lines = []
    for command in ("true", "echo hello", "ls -la /usr/bin | wc -l"):
        cli = ["docker", "exec", "-u", "1000", box.container_id, "bash", "-c", command]
        ours: list[float] = []
        theirs: list[float] = []
        # Alternating the two paths spreads any drift of the machine over both.
        for _ in range(count):
            ours += timings(lambda command=command: box.run(command), 1)
            theirs += timings(lambda cli=cli: subprocess.run(cli, capture_output=True), 1)
        lines.append(row(f"exec `{command}`", ours, theirs))
    return lines


def start_latency(policy: SandboxPolicy, count: int, raw: bool = False) -> Any:
    """A cold create-and-start against a claim from a full warm pool: rows, or with `raw`
    the seconds of each."""
    cold: list[float] = []
    for n in range(count):
        started = time.perf_counter()
        box = open_sandbox(f"bench-cold-{n}", policy)
        cold.append(time.perf_counter() - started)
        box.__exit__(None, None, None)
    pool = WarmPool(policy, count)
    try:
        while pool.ready() < count:
            time.sleep(0.1)
        warm: list[float] = []
        claimed = []
        for n in range(count):
            started = time.perf_counter()
            claimed.append(pool.claim(f"bench-warm-{n}"))
            warm.append(time.perf_counter() - started)
        for box in claimed:
            box.__exit__(None, None, None)
    finally:
        pool.close()
    if raw:
        return {"cold start": cold, "warm pool claim": warm}
    return [row("cold start (create + start)", cold), row("warm pool claim", warm)]


# A repository of 200 files, and a change of ten: five edited, four new, one deleted.
REPO = """
set -e
git init -q -b main . && git config user.name b && git config user.email b@e.x
for n in $(seq 200); do mkdir -p d$((n % 10)); seq $n > d$((n % 10))/f$n.txt; done
git add -A && git commit -qm base && git ls-tree -r -z --full-tree HEAD > /tmp/listing
"""
CHANGE = "for n in 1 2 3 4 5; do echo x >> d$n/f$n.txt; echo y > new$n.txt; done; rm d0/f10.txt"


def export_latency(policy: SandboxPolicy, root: Path, count: int) -> list[str]:
    """Taking a ten-file change out of a stopped sandbox, against the host-side `git add -N`
    and `git diff` the worker ran on the bind-mounted workspace before."""
    ours: list[float] = []
    for n in range(count):
        box = open_sandbox(f"bench-export-{n}", policy)
        with box:
            box.run(REPO + CHANGE)
            listing = box.run("cat /tmp/listing").output.encode()
            started = time.perf_counter()
            box.export(listing, ExportLimits())
            ours.append(time.perf_counter() - started)
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["bash", "-c", REPO], cwd=repo, check=True, capture_output=True)
    subprocess.run(["bash", "-c", CHANGE], cwd=repo, check=True)
    old: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run(["git", "add", "-N", "--all", "."], cwd=repo, check=True)
        subprocess.run(["git", "diff", "HEAD"], cwd=repo, check=True, capture_output=True)
        old.append(time.perf_counter() - started)
    return [row("change out (export) vs host diff", ours, old)]


def idle_memory(policy: SandboxPolicy, count: int) -> list[str]:
    """The memory cgroup usage of `count` idle sandboxes, read from inside each."""
    with ExitStack() as stack:
        boxes = [stack.enter_context(open_sandbox(f"bench-idle-{n}", policy)) for n in range(count)]
        time.sleep(1)
        usages = [int(box.run(MEMORY_USAGE).output.split()[0]) for box in boxes]
    mib = 1024 * 1024
    return [
        f"idle sandboxes: {count}",
        f"  memory per sandbox, median: {statistics.median(usages) / mib:.1f} MiB",
        f"  memory of all {count}: {sum(usages) / mib:.1f} MiB",
    ]


# 2,000 small files, a grep through them and a 300-file commit; then pure-Python arithmetic.
FILE_HEAVY = """
set -e
rm -rf /tmp/heavy && mkdir /tmp/heavy && cd /tmp/heavy && git init -q .
for n in $(seq 2000); do echo "line $n" > f$n.txt; done
grep -r "line 1999" . > /dev/null
git add $(seq -f 'f%g.txt' 300) && git -c user.name=b -c user.email=b@e.x commit -qm files
"""
CPU_BOUND = "python3 -c 'sum(i * i for i in range(3_000_000))'"


def runtime_figures(policy: SandboxPolicy, count: int) -> dict[str, list[float]]:
    """Seconds of each step under `policy`'s runtime."""
    figures: dict[str, list[float]] = {}
    started = start_latency(policy, count, raw=True)
    figures.update(started)
    with open_sandbox("bench-runtime", policy) as box:
        figures["exec `true`"] = timings(lambda: box.run("true"), count * 5)
        figures["file-heavy step"] = timings(lambda: box.run(FILE_HEAVY), count)
        figures["CPU-bound step"] = timings(lambda: box.run(CPU_BOUND), count)
    return figures


def runtimes_side_by_side(policy: SandboxPolicy, count: int) -> list[str]:
    """runc and runsc, the same steps, one column each (median ms) and their ratio."""
    try:
        engine_runtimes("runsc")
    except RuntimeMissingError as error:
        return [f"runsc: not measured ({error})"]
    runc = runtime_figures(replace(policy, runtime="runc"), count)
    runsc = runtime_figures(replace(policy, runtime="runsc"), count)
    lines = [f"{'runtime (median ms)':<34} {'runc':>9} {'runsc':>9} {'ratio':>7}"]
    for name, ours in runc.items():
        theirs = runsc[name]
        a, b = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
        lines.append(f"{name:<34} {a:9.1f} {b:9.1f} {b / a:7.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--execs", type=int, default=50, help="Samples per exec figure.")
    parser.add_argument("--starts", type=int, default=10, help="Cold starts and warm claims.")
    parser.add_argument("--idle", type=int, default=10, help="Idle sandboxes to measure.")
    args = parser.parse_args()
    policy = SandboxPolicy(image=ensure_image(offline=True))
    with tempfile.TemporaryDirectory(prefix="resolver-bench-") as scratch:
        root = Path(scratch)
        print(HEADER)
        print("-" * len(HEADER))
        with open_sandbox("bench-exec", policy) as box:
            for line in exec_latency(box, args.execs):
                print(line)
        for line in start_latency(policy, args.starts):
            print(line)
        for line in export_latency(policy, root, args.starts):
            print(line)
        print()
        for line in idle_memory(policy, args.idle):
            print(line)
        print()
        for line in runtimes_side_by_side(policy, max(args.starts, 2)):
            print(line)


if __name__ == "__main__":
    main()
