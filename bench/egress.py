"""Egress figures, side by side in one run:
- the start of a job with network over one without, until its first command has run: cold
  (`open_sandbox`: the proxy starts alongside the sandbox), and warm (`WarmPool.claim`: a warm
  container against a warm spare, whose proxy already listens), the spare's list as the job's
  and another one (its proxy reconfigured in place);
- a 50 MB download from a stand-in host through the proxy, plain HTTP against HTTPS (which Squid
  only tunnels), by the same client (curl, a new connection each), taking turns, and each against
  the same download direct on the uplink; with the CPU seconds each download cost the proxy, the
  client's container and the stand-in (read from the engine's cgroups, where the host has them),
  which, unlike a rate, hardly move with the host's load.

Run with `uv run python bench/egress.py`; `--load N` runs it while N busy loops hold the CPU.
Goals (issue 35): a warm spare adds < 100 ms until the first command; plain HTTP through the
proxy is at least 0.8x HTTPS through it. The stand-in is a container of the bench's own;
nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT))

from sandbox import (  # noqa: E402
    Allowance,
    EgressPlan,
    Sandbox,
    SandboxPolicy,
    WarmPool,
    ensure_image,
    ensure_proxy_image,
    open_sandbox,
    remove_all,
)
from sandbox.naming import LABEL_DEPLOYMENT  # noqa: E402
from tests.sandbox.standins import ALLOWED, DENIED, outside  # noqa: E402

BIG = "head -c {size} /dev/zero > /srv/www/big"
FETCH = "curl -k -sS -o /dev/null -w '%{{speed_download}}' {scheme}://{host}/big"
STARTS: dict[str, list[float]] = {}
"""Seconds until the first command, per kind of start."""
LOAD_SECONDS = 900.0
"""A busy loop stops by itself after this long, whatever happens to the bench."""


def _until_first_command(
    claims: dict[str, Callable[[int], Sandbox]], count: int, settle: Callable[[], None]
) -> None:
    """Per kind, seconds from asking for a sandbox until its first command has run (after
    `settle`, untimed); the kinds take turns, so that each sees the host's load of the moment."""
    for n in range(count):
        for name, claim in claims.items():
            settle()
            started = time.perf_counter()
            box = claim(n)
            box.run("true")
            STARTS.setdefault(name, []).append(time.perf_counter() - started)
            box.__exit__(None, None, None)


def _refilled(pool: WarmPool) -> Callable[[], None]:
    def wait() -> None:
        deadline = time.monotonic() + 60
        while not (pool.ready() and pool.ready(networked=True)):  # both kinds ready: warm
            if time.monotonic() > deadline:
                raise RuntimeError("the warm pool did not refill within a minute")
            time.sleep(0.05)

    return wait


def _warm_claim(pool: WarmPool, plan: EgressPlan | None) -> Callable[[int], Sandbox]:
    return lambda n: pool.claim(f"bench-warm-{n}", egress=plan)


def _cpu_seconds(container_id: str) -> float | None:
    """CPU time the container has used so far, from its cgroup (v1 or v2, the engine's cgroupfs
    or systemd layout); None where the host does not show it."""
    for path, scale in (
        (f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage", 1e-9),
        (f"/sys/fs/cgroup/cpu,cpuacct/docker/{container_id}/cpuacct.usage", 1e-9),
        (f"/sys/fs/cgroup/docker/{container_id}/cpu.stat", 1e-6),
        (f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat", 1e-6),
    ):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if path.endswith("cpu.stat"):  # v2: "usage_usec N" among others
            text = dict(line.split() for line in text.splitlines())["usage_usec"]
        return int(text) * scale
    return None


def _download(box: Sandbox, stand_in: str, scheme: str) -> tuple[float, list[float | None]]:
    """The rate of one download through the proxy (bytes/s), and the CPU seconds it cost the
    proxy, the client's container and the stand-in."""
    assert box.egress is not None
    ids = (box.egress.container_id, box.container_id, stand_in)
    before = [_cpu_seconds(container) for container in ids]
    rate = float(box.run(FETCH.format(scheme=scheme, host=ALLOWED)).output)
    after = [_cpu_seconds(container) for container in ids]
    spent = [None if a is None or b is None else b - a for a, b in zip(before, after, strict=True)]
    return rate, spent


def _print_cpu(scheme: str, spent: list[list[float | None]]) -> None:
    columns = []
    for who, seconds in zip(("proxy", "client", "server"), zip(*spent, strict=True), strict=True):
        known = [second for second in seconds if second is not None]
        columns.append(f"{who} {statistics.median(known):5.3f}" if known else f"{who}   n/a")
    print(f"CPU seconds per download, {scheme:5}: {', '.join(columns)}")


def _direct(image: str, network: str, deployment: str, scheme: str) -> float:
    argv = ["docker", "run", "--rm", "--network", network, "--label"]
    fetch = FETCH.format(scheme=scheme, host=ALLOWED)
    argv += [f"{LABEL_DEPLOYMENT}={deployment}", image, "sh", "-c", fetch]
    return float(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def _spin() -> None:
    deadline = time.monotonic() + LOAD_SECONDS
    while time.monotonic() < deadline:
        pass


@contextmanager
def _cpu_load(processes: int) -> Iterator[None]:
    """`processes` busy loops on the host while the block runs."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(processes)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


def _print_start(what: str, bare: list[float], behind: list[float], goal: str) -> None:
    median = statistics.median
    extra = (median(behind) - median(bare)) * 1000
    print(
        f"until first command, {what + ':':34} no network {median(bare) * 1000:5.0f} ms, "
        f"network {median(behind) * 1000:5.0f} ms, extra {extra:5.0f} ms{goal}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--downloads", type=int, default=10)
    parser.add_argument("--megabytes", type=int, default=50, help="size of each download")
    parser.add_argument("--load", type=int, default=0, help="busy loops while it runs")
    args = parser.parse_args()
    started_load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    deployment = f"bench-egress-{uuid.uuid4().hex[:6]}"
    image, proxy = ensure_image(offline=True), ensure_proxy_image(offline=True)
    through: dict[str, list[float]] = {"http": [], "https": []}
    spent: dict[str, list[list[float | None]]] = {"http": [], "https": []}
    direct: dict[str, list[float]] = {"http": [], "https": []}
    with outside(image, deployment, {LABEL_DEPLOYMENT: deployment}) as out, _cpu_load(args.load):
        policy = SandboxPolicy(
            image=image, deployment=deployment, proxy_image=proxy, egress_uplink=out.network
        )
        plan = EgressPlan(Allowance((ALLOWED,)))
        other = EgressPlan(Allowance((DENIED,)))
        big = BIG.format(size=args.megabytes * 1024 * 1024)
        subprocess.run(["docker", "exec", out.network, "sh", "-c", big], check=True)
        inspect = ["docker", "inspect", "-f", "{{.Id}}", out.network]  # named as its network
        stand_in = subprocess.run(inspect, capture_output=True, text=True, check=True).stdout
        try:
            cold = {
                "cold none": lambda n: open_sandbox(f"bench-cold-{n}", policy),
                "cold net": lambda n: open_sandbox(f"bench-cold-net-{n}", policy, egress=plan),
            }
            _until_first_command(cold, args.starts, lambda: None)
            pool = WarmPool(policy, 1, plan)
            try:
                warm = {"warm none": None, "warm net": plan, "warm other": other}
                claims = {name: _warm_claim(pool, wanted) for name, wanted in warm.items()}
                _until_first_command(claims, args.starts, _refilled(pool))
            finally:
                pool.close()
            with open_sandbox("bench-egress-dl", policy, egress=plan) as box:
                for _ in range(args.downloads):
                    for scheme in through:
                        rate, cpu = _download(box, stand_in.strip(), scheme)
                        through[scheme].append(rate)
                        spent[scheme].append(cpu)
            for _ in range(args.downloads):
                for scheme in direct:
                    direct[scheme].append(_direct(image, out.network, deployment, scheme))
        finally:
            remove_all(deployment)
    loads = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load: {args.load} busy loops on {multiprocessing.cpu_count()} CPUs")
    print(f"load average at the start {started_load}, at the end {loads}")
    _print_start("cold start", STARTS["cold none"], STARTS["cold net"], "")
    _print_start("warm spare", STARTS["warm none"], STARTS["warm net"], " (goal < 100 ms)")
    _print_start("warm spare, another list", STARTS["warm none"], STARTS["warm other"], "")
    median = statistics.median
    for scheme in ("http", "https"):
        ratio = median(through[scheme]) / median(direct[scheme])
        print(
            f"{args.megabytes} MB over {scheme:5}: "
            f"through the proxy {median(through[scheme]) / 1e6:6.1f} MB/s, "
            f"direct {median(direct[scheme]) / 1e6:6.1f} MB/s, ratio {ratio:4.2f}"
        )
    for scheme in ("http", "https"):
        _print_cpu(scheme, spent[scheme])
    ratio = median(through["http"]) / median(through["https"])
    print(f"through the proxy, HTTP over HTTPS: {ratio:4.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
