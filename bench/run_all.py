"""`make bench`: run every benchmark in bench/, one after another, and print their figures.

    uv run python bench/run_all.py [--smoke] [BENCH ...]

`--smoke` (`make bench-smoke`, run by CI) runs each at a tiny size, in seconds, so a bench that
no longer starts is seen the day it breaks; its figures mean nothing. Either way a bench fails
when it exits non-zero or when its output lacks the lines its table prints, and the run then
exits non-zero, naming it, with the end of its output (standard error included) again below
the summary. Before anything runs, every bench in bench/ must be listed in
BENCHES, and no module in bench/ may be named like one of the project's packages: a bench runs
with bench/ first on its path, where such a module would hide the package.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SMOKE_TIMEOUT = 300.0
"""Seconds a bench may take at its smoke size before it counts as failed."""
FAILED_TAIL = 15
"""Lines of a failed bench's output repeated below the summary."""


@dataclass(frozen=True)
class Bench:
    script: str
    """Under bench/: a file, or a folder with a __main__.py."""
    table: tuple[str, ...]
    """Lines of its table that its output must hold, the table's last among them, so a table
    cut short fails too."""
    smoke: tuple[str, ...]
    """Arguments for a run of seconds."""


BENCHES = (
    Bench(
        "agent.py",
        ("overhead (end to end", "MCP call, remote", "condensations in the run"),
        ("--steps", "3"),
    ),
    Bench(
        "egress.py",
        ("until first command, warm spare", "HTTP forwarded over HTTPS"),
        ("--starts", "1", "--rounds", "1", "--megabytes", "20"),
    ),
    Bench(
        "ingress.py",
        (
            "latencies in ms",
            "the writer at",
            "against Probot",
            "the same signed deliveries",
            "this machine:",
        ),
        ("--duration", "1", "--senders", "5", "--deliveries", "20"),
    ),
    Bench(
        "load.py",
        ("POST → draft PR", "memory: every worker process"),
        ("--mentions", "2", "--delay", "0.2", "--calls", "2", "--network"),
    ),
    Bench(
        "tracing.py",
        ("ingress, fixed rate", "agent loop, per step", "spans received"),
        ("--block", "1", "--senders", "5", "--steps", "2", "--rounds", "1", "--rate", "20"),
    ),
    Bench("migrations.py", ("migrations after", "per million jobs"), ("--rows", "2000")),
    Bench(
        "retention.py",
        ("while retention prunes", "pruned "),
        ("--jobs", "300", "--steps", "3", "--duration", "1", "--rate", "20"),
    ),
    Bench(
        "sandboxes.py",
        ("warm pool claim", "memory of all"),
        ("--execs", "3", "--starts", "2", "--idle", "2"),
    ),
    Bench(
        "storage.py",
        ("bytes per job", "a year at 1,000 jobs a day"),
        ("--jobs", "1", "--steps", "4"),
    ),
    Bench(
        "startup.py",
        (
            "command line (resolver --version)",
            "web (resolver serve)",
            "callbacks worker / jobs worker",
        ),
        ("--runs", "1"),
    ),
    Bench(
        "web",
        ("/jobs/{id},", "this machine:"),
        ("--requests", "5", "--warm-up", "1", "--jobs", "100", "--steps", "10"),
    ),
)


def on_disk() -> set[str]:
    """The benches in bench/: each script and each folder with a __main__.py, but not this
    file nor a helper (a name starting with `_`)."""
    found = {
        *(p.name for p in HERE.glob("*.py")),
        *(p.parent.name for p in HERE.glob("*/__main__.py")),
    }
    return {name for name in found if name != Path(__file__).name and not name.startswith("_")}


def layout_errors() -> list[str]:
    """Benches missing from BENCHES (or listed and gone), and modules that shadow a package."""
    listed = {bench.script for bench in BENCHES}
    errors = [f"bench/{name} is not in run_all.py's BENCHES" for name in on_disk() - listed]
    errors += [f"BENCHES lists bench/{name}, which does not exist" for name in listed - on_disk()]
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    modules = [*HERE.rglob("*.py"), *(path for path in HERE.iterdir() if path.is_dir())]
    for module in sorted(modules):
        if module.stem in packages:
            errors.append(
                f"bench/{module.relative_to(HERE)} hides the project's `{module.stem}` package "
                "from the benches (bench/ comes first on their path): rename it"
            )
    return errors


def run(bench: Bench, smoke: bool) -> tuple[str | None, list[str]]:
    """Run one bench, its output (standard error included) shown as it comes: what went wrong,
    or None, and the output."""
    command = [sys.executable, str(HERE / bench.script), *(bench.smoke if smoke else ())]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    output: list[str] = []
    reader = threading.Thread(target=echo, args=(process, output), daemon=True)
    reader.start()
    try:
        code = process.wait(timeout=SMOKE_TIMEOUT if smoke else None)
    except subprocess.TimeoutExpired:
        stop(process)
        return f"still running after {SMOKE_TIMEOUT:g} s", output
    finally:
        reader.join(timeout=10)
    if code != 0:
        return f"exit code {code}", output
    missing = [line for line in bench.table if line not in "".join(output)]
    return (f"no table: its output lacks {missing[0]!r}" if missing else None), output


def echo(process: subprocess.Popen[str], into: list[str]) -> None:
    """Print the bench's output as it comes, and keep it."""
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", flush=True)
        into.append(line)


def stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM first: the benches clean up their servers and sandboxes on it."""
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="each bench at a tiny size")
    parser.add_argument("only", nargs="*", help="these benches only (agent.py, web, …)")
    args = parser.parse_args()
    errors = layout_errors()
    errors += [f"no bench is named {name}" for name in set(args.only) - on_disk()]
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    chosen = [bench for bench in BENCHES if not args.only or bench.script in args.only]
    outcomes: list[tuple[str, float, str | None]] = []
    ends: dict[str, list[str]] = {}
    started = time.monotonic()
    for bench in chosen:
        print(f"\n=== {bench.script.removesuffix('.py')} ===", flush=True)
        began = time.monotonic()
        failure, output = run(bench, args.smoke)
        outcomes.append((bench.script, time.monotonic() - began, failure))
        if failure is not None:
            ends[bench.script] = output[-FAILED_TAIL:]
    kind = "smoke run" if args.smoke else "run"
    print(f"\n=== {kind}: {len(chosen)} benches in {time.monotonic() - started:.0f} s ===")
    for script, seconds, failure in outcomes:
        print(f"  {script:16}{seconds:7.1f} s  {'ok' if failure is None else 'FAILED: ' + failure}")
    for script, end in ends.items():  # again where a log's tail shows it: the cause is there
        print(f"--- the end of {script}'s output ---\n{''.join(end).rstrip()}")
    failed = [script for script, _, failure in outcomes if failure is not None]
    if failed:
        print(f"bench {kind} failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
