"""Jobs under load (issue #18): N concurrent mentions from distinct users, against the Procfile's
process layout and, with `--baseline`, today's two-slot layout, in the same run.

    uv run --frozen python bench/load.py [--mentions 24] [--delay 8] [--calls 3] [--baseline]
                                         [--slots N] [--postgres] [--network] [--keep DIR]

The shapes issue #36 names: `--mentions 24`, and `--mentions 48 --slots 48` (a host configured
for 48 jobs: the Procfile's jobs worker at `--concurrency 48`); every 👀 within 2 s in both.

Each layout gets a fresh service (bench/_rig.py): the Procfile's commands as child processes
(`python -m resolver.cli …`, the web process on a loopback port), on a SQLite file
(`--postgres`: a database of its own on the project's PostgreSQL) and Redis db 13, with the
GitHub stand-in, the git server and the scripted model in this process. The model takes
`--delay` seconds per completion and answers `--calls` completions per job (the fix, test runs,
finish), so every job ends in changed code and a draft pull request. N linked senders, each a
writer on the repository, mention the bot at once, each on an issue of its own, in signed
`issue_comment.created` deliveries POSTed to the web process. `--network`: each job's sandbox may
reach a host, so each job runs on an internal network of its own behind a proxy of its own
(the engine's own address pools held about 30 such networks). Every mention is on one
repository, so RESOLVER_MAX_JOBS_PER_REPO (default 5) is raised to N.

Per mention, from just before its POST: to the bot's 👀 on the comment (as the stand-in received
it), to the job's start (jobs.started_at) and to its draft pull request (as the stand-in
received it). Every 0.2 s: the jobs running, and the RSS and PSS (/proc/<pid>/smaps_rollup) of
each worker process with its children (a vforked child not yet exec'd is its parent's memory,
counted once). Memory per running job is the workers' memory at the peak of running jobs
divided by the jobs running then; the idle figure is before the first mention. `--keep DIR`
keeps each process's log and every sample (CSV).
"""

from __future__ import annotations

import argparse
import csv
import math
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/_rig, bench/_load, bench/ingress

from _rig import Layout, Memory, MiB, Rig, Sample, procfile, sampling, two_slots

EYES_GOAL = 2.0
RUNNING_GOAL = 24  # or every mention, when there are fewer
RSS_GOAL = 60 * MiB


@dataclass
class Posted:
    comment_id: int
    posted_at: float
    status: int
    job_id: int | None


@dataclass
class Figures:
    layout: Layout
    eyes: list[float]
    start: list[float]
    pull: list[float]
    peak: int
    at_peak: dict[str, Memory]  # by worker, at the peak of running jobs
    idle: dict[str, Memory]
    most: tuple[int, int]  # the workers' largest RSS and PSS in any sample
    finished: int
    pulls: int
    failures: list[str]
    wall: float

    @staticmethod
    def total(memory: dict[str, Memory]) -> tuple[int, int]:
        return sum(m.rss for m in memory.values()), sum(m.pss for m in memory.values())


def post_all(made: Rig, senders: range | None = None) -> list[Posted]:
    """Every sender's mention (or those of `senders`) at once, a thread each, released
    together."""
    import httpx

    chosen = range(made.mentions) if senders is None else senders
    deliveries = [made.mention(n) for n in chosen]
    posted: list[Posted | None] = [None] * len(deliveries)
    gate = threading.Barrier(len(deliveries))

    def send(n: int) -> None:
        comment_id, delivery = deliveries[n]
        with httpx.Client(base_url=made.base_url, timeout=60) as client:
            gate.wait()
            at = time.time()
            answer = client.post(delivery.path, content=delivery.body, headers=delivery.headers)
        job = answer.json().get("job_id") if answer.status_code == 202 else None
        posted[n] = Posted(comment_id, at, answer.status_code, job)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(deliveries))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [p for p in posted if p is not None]


def jobs_by_id(ids: list[int]) -> dict[int, Any]:
    from sqlalchemy import select

    from resolver.store.db import session_scope
    from resolver.store.models import Job

    with session_scope() as session:
        found = list(session.scalars(select(Job).where(Job.id.in_(ids))))
        for job in found:
            session.expunge(job)
    return {job.id: job for job in found}


def settled(made: Rig, posted: list[Posted]) -> bool:
    """Every job finished, and every one that changed code has its draft pull request."""
    jobs = jobs_by_id([p.job_id for p in posted if p.job_id is not None])
    return all(
        job.finished_at is not None
        and (job.outcome != "changed_code" or (job.branch or "") in made.api.pull_at)
        for job in jobs.values()
    )


def measure(layout: Layout, args: argparse.Namespace) -> Figures:
    print(f"\n{layout.name}: " + " | ".join(layout.commands.values()), flush=True)
    rig = Rig(layout, args.mentions, args.delay, args.calls, args.postgres, network=args.network)
    with rig as made:
        idle = []
        for _ in range(10):  # the workers settle after their ping
            time.sleep(0.3)
            idle.append(made.sample())
        with sampling(made, 0.2) as samples:
            started = time.time()
            posted = post_all(made)
            deadline = time.monotonic() + args.timeout
            while not settled(made, posted):
                made.check_alive()
                if time.monotonic() > deadline:
                    print(f"timed out after {args.timeout} s\n{made.logs()}", file=sys.stderr)
                    break
                time.sleep(0.5)
            wall = time.time() - started
        if args.keep:
            keep(args.keep / layout.name, made, [*idle, *samples], started)
        return figures(made, layout, posted, idle, list(samples), wall)


def keep(where: Path, made: Rig, samples: list[Sample], started: float) -> None:
    """Each process's log, and every sample as a CSV row (seconds from the first POST)."""
    where.mkdir(parents=True, exist_ok=True)
    for log in made.tmp.glob("*.log"):
        shutil.copy(log, where / log.name)
    with (where / "samples.csv").open("w", newline="") as out:
        rows = csv.writer(out)
        columns = ["rss", "pss", "worker_rss", "worker_pss", "children", "children_rss"]
        rows.writerow(["t", "running", *(f"{w}_{c}" for w in made.layout.workers for c in columns)])
        for sample in samples:
            cells: list[object] = [f"{sample.at - started:.2f}", sample.running]
            for worker in made.layout.workers:
                m = sample.memory[worker]
                kids = m.children.values()
                cells += [m.rss, m.pss, *m.leader, sum(c[0] for c in kids), sum(c[1] for c in kids)]
            rows.writerow(cells)


def figures(
    made: Rig,
    layout: Layout,
    posted: list[Posted],
    idle: list[Sample],
    samples: list[Sample],
    wall: float,
) -> Figures:
    jobs = jobs_by_id([p.job_id for p in posted if p.job_id is not None])
    eyes, start, pull, failures = [], [], [], []
    for p in posted:
        job = jobs.get(p.job_id or 0)
        if job is None:
            failures.append(f"comment {p.comment_id}: POST answered {p.status}")
            continue
        if p.comment_id in made.api.eyes_at:
            eyes.append(made.api.eyes_at[p.comment_id] - p.posted_at)
        if job.started_at is not None:
            start.append(job.started_at.timestamp() - p.posted_at)
        if (job.branch or "") in made.api.pull_at:
            pull.append(made.api.pull_at[job.branch] - p.posted_at)
        elif job.finished_at is not None:
            failures.append(f"job {job.id}: {job.state} {job.outcome} {job.error or ''}".strip())
    peak = max((s.running for s in samples), default=0)
    top = max(
        (s for s in samples if s.running == peak),
        key=lambda s: Figures.total(s.memory)[0],
        default=idle[-1],
    )
    quiet = idle[-1]
    finished = sum(1 for job in jobs.values() if job.finished_at is not None)
    totals = [Figures.total(s.memory) for s in samples] or [Figures.total(quiet.memory)]
    most = (max(r for r, _ in totals), max(p for _, p in totals))
    return Figures(
        layout, eyes, start, pull, peak, top.memory, quiet.memory, most, finished, len(pull),
        failures, wall,
    )  # fmt: skip


def quantile(values: list[float], q: float) -> float:
    """The nearest-rank quantile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def spread(values: list[float], expected: int) -> str:
    if not values:
        return "none"
    cells = "/".join(f"{quantile(values, q):.1f}" for q in (0.5, 0.99, 1.0))
    return cells + (f" ({expected - len(values)} none)" if len(values) < expected else "")


def mib(value: float) -> str:
    return f"{value / MiB:.0f}"


def rows(f: Figures, n: int) -> dict[str, str]:
    rss, pss = f.total(f.at_peak)
    idle_rss, idle_pss = f.total(f.idle)
    per = max(f.peak, 1)
    return {
        "POST → 👀 p50/p99/max s": spread(f.eyes, n),
        "POST → job start p50/p99/max s": spread(f.start, n),
        "POST → draft PR p50/p99/max s": spread(f.pull, n),
        "peak jobs running at once": str(f.peak),
        "workers' RSS per running job MiB": mib(rss / per),
        "workers' PSS per running job MiB": mib(pss / per),
        "  above idle, per running job MiB": f"{mib((rss - idle_rss) / per)} RSS, "
        f"{mib((pss - idle_pss) / per)} PSS",
        "workers' RSS / PSS at the peak MiB": f"{mib(rss)} / {mib(pss)}",
        "workers' RSS / PSS idle MiB": f"{mib(idle_rss)} / {mib(idle_pss)}",
        "workers' RSS / PSS most in the run MiB": f"{mib(f.most[0])} / {mib(f.most[1])}",
        "jobs finished, draft PRs": f"{f.finished}/{n}, {f.pulls}/{n}",
        "first POST to last PR s": f"{f.wall:.0f}",
    }


def goals(f: Figures, n: int) -> dict[str, tuple[str, bool]]:
    rss, _ = f.total(f.at_peak)
    running = min(RUNNING_GOAL, n)
    return {
        "POST → 👀 p50/p99/max s": (
            f"≤ {EYES_GOAL:.0f} s, every one",
            len(f.eyes) == n and max(f.eyes) <= EYES_GOAL,
        ),
        "peak jobs running at once": (f"{running}", f.peak >= running),
        "workers' RSS per running job MiB": (
            f"< {mib(RSS_GOAL)}",
            f.peak > 0 and rss / f.peak < RSS_GOAL,
        ),
    }


def table(args: argparse.Namespace, results: list[Figures]) -> None:
    db = "PostgreSQL" if args.postgres else "SQLite"
    print(
        f"\n{args.mentions} concurrent mentions from distinct users, {args.calls} completions "
        f"per job at {args.delay:g} s each, {db}"
        + (", each job on a network and behind a proxy of its own" if args.network else "")
    )
    columns = [rows(f, args.mentions) for f in results]
    wanted = goals(results[0], args.mentions)
    width = max(len(name) for name in columns[0]) + 2
    names = [f.layout.name for f in results]
    print(f"{'':{width}}" + "".join(f"{name:>20}" for name in names) + f"   {'goal':18}{names[0]}")
    for label in columns[0]:
        cells = "".join(f"{column[label]:>20}" for column in columns)
        goal, met = wanted.get(label, ("", None))
        verdict = "" if met is None else ("met" if met else "MISSED")
        print(f"{label:{width}}{cells}   {goal:18}{verdict}".rstrip())
    for f in results:
        for name in f.layout.workers:
            peak, idle = f.at_peak[name], f.idle[name]
            children = ", ".join(
                f"{count} {command} {mib(rss)}/{mib(pss)}"
                for command, (count, rss, pss) in sorted(peak.children.items())
            )
            print(
                f"{f.layout.name} {name}: RSS/PSS MiB idle {mib(idle.rss)}/{mib(idle.pss)}, "
                f"at the peak {mib(peak.rss)}/{mib(peak.pss)}: the worker "
                f"{mib(peak.leader[0])}/{mib(peak.leader[1])}"
                + (f", children {children}" if children else "")
            )
        for failure in f.failures[:10]:
            print(f"{f.layout.name}: {failure}")
    print(
        "memory: every worker process and its children (both workers in the Procfile layout); "
        "the peak is the sample with the most jobs running"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", type=int, default=24, help="concurrent mentions")
    parser.add_argument("--delay", type=float, default=8.0, help="seconds per model completion")
    parser.add_argument("--calls", type=int, default=3, help="completions per job (at least 2)")
    parser.add_argument(
        "--slots", type=int, help="job slots: the Procfile's jobs worker with this --concurrency"
    )
    parser.add_argument("--baseline", action="store_true", help="also run the two-slot layout")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    parser.add_argument(
        "--network", action="store_true", help="each job behind a network and proxy of its own"
    )
    parser.add_argument("--timeout", type=float, help="seconds to wait for every job and PR")
    parser.add_argument(
        "--keep", type=Path, help="keep each process's log and the samples (CSV) in DIR/<layout>"
    )
    args = parser.parse_args()
    if args.calls < 2:
        parser.error("--calls must be at least 2: the fix, then finish")
    if args.timeout is None:
        args.timeout = 300 + args.mentions * (args.calls * args.delay + 20)
    # SIGTERM (and SIGINT, even where a shell started us ignoring it) unwinds like Ctrl-C, so
    # every run's processes, sandboxes and files go.
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.default_int_handler)
    layouts = [procfile(args.slots), *([two_slots()] if args.baseline else [])]
    table(args, [measure(layout, args) for layout in layouts])


if __name__ == "__main__":
    main()
