"""What a process pays to start: the command line's own start (`resolver --version`, run in
full), the web process's imports (`resolver serve`: the command line, its command's module, then
`resolver.app`) beside the workers' (`resolver worker`: the command line, its command's module,
then `resolver.tasks`; a worker that consumes the jobs queue also loads `resolver.runners`),
each in fresh interpreters, side by side.

    uv run python bench/startup.py [--runs 5]

Per process: the median wall time of its start (the imports, and the command if it has one),
the interpreter's resident memory after them (VmRSS) and its peak (VmHWM), how many modules it
loaded, and which of the agent's heavy parts it loaded (litellm, docker, the sandbox, the
agent's loop). The web process should load none of them (the `web-stays-light` import
contract; issue #31 measured `import resolver.app` at 4.5 s and 240 MiB before). Figures only;
nothing asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Process:
    modules: tuple[str, ...]
    """Imported in turn."""
    command: tuple[str, ...] = ()
    """Then `resolver COMMAND`, run by its entry point (its output left out), if given."""


SERVICES = ("resolver.cli", "resolver.cli.services")
PROCESSES = {
    "command line (resolver --version)": Process(("resolver.cli",), ("--version",)),
    "web (resolver serve)": Process((*SERVICES, "resolver.app")),
    "callbacks worker (--queues callbacks)": Process((*SERVICES, "resolver.tasks")),
    "jobs worker (--queues jobs)": Process((*SERVICES, "resolver.tasks", "resolver.runners")),
}
HEAVY = ("litellm", "docker", "sandbox", "resolver.agent.controller")
MiB = 1024

# Run in a fresh interpreter: time the start, then read this process's memory from /proc.
PROBE = """
import contextlib, importlib, io, json, sys, time
command = json.loads(sys.argv[2])
started = time.perf_counter()
for module in sys.argv[1].split(","):
    importlib.import_module(module)
if command:
    sys.argv = ["resolver", *command]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            importlib.import_module("resolver.cli").main()
    except SystemExit as exit:
        if exit.code:
            raise
seconds = time.perf_counter() - started
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({
    "seconds": seconds,
    "rss_kib": int(status["VmRSS"].split()[0]),
    "peak_kib": int(status["VmHWM"].split()[0]),
    "modules": len(sys.modules),
    "heavy": [name for name in sys.argv[3:] if name in sys.modules],
}))
"""


@dataclass(frozen=True)
class Start:
    seconds: float
    rss_kib: int
    peak_kib: int
    modules: int
    heavy: tuple[str, ...]


def start(process: Process) -> Start:
    """One fresh interpreter starting `process`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(process.modules), json.dumps(process.command),
         *HEAVY],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    found = json.loads(done.stdout)
    return Start(
        found["seconds"], found["rss_kib"], found["peak_kib"], found["modules"],
        tuple(found["heavy"]),
    )  # fmt: skip


def median(starts: list[Start]) -> Start:
    """The median of each figure."""
    return Start(
        statistics.median(s.seconds for s in starts),
        int(statistics.median(s.rss_kib for s in starts)),
        int(statistics.median(s.peak_kib for s in starts)),
        int(statistics.median(s.modules for s in starts)),
        starts[-1].heavy,
    )


def table(figures: dict[str, Start], runs: int) -> None:
    print(f"each process's start in a fresh interpreter, median of {runs}")
    print(f"{'':38}{'start s':>9}{'RSS MiB':>9}{'peak MiB':>9}{'modules':>9}   heavy parts loaded")
    for name, f in figures.items():
        heavy = ", ".join(f.heavy) or "none"
        print(
            f"{name:38}{f.seconds:9.2f}{f.rss_kib / MiB:9.0f}"
            f"{f.peak_kib / MiB:9.0f}{f.modules:9d}   {heavy}"
        )
    jobs = figures["jobs worker (--queues jobs)"]
    for name, f in figures.items():
        if f is jobs:
            continue
        print(
            f"{name.split(' (')[0] + ' / jobs worker':38}{f.seconds / jobs.seconds:9.2f}"
            f"{f.rss_kib / jobs.rss_kib:9.2f}{f.peak_kib / jobs.peak_kib:9.2f}"
            f"{f.modules / jobs.modules:9.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per process")
    args = parser.parse_args()
    starts: dict[str, list[Start]] = {name: [] for name in PROCESSES}
    for _ in range(args.runs):  # the processes take turns, so a busier moment costs both
        for name, process in PROCESSES.items():
            starts[name].append(start(process))
    figures = {name: median(found) for name, found in starts.items()}
    table(figures, args.runs)


if __name__ == "__main__":
    main()
