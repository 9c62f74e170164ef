"""Egress figures, side by side in one run:
- the start of a job with network over one without, until its first command has run: cold
  (`open_sandbox`: the proxy starts alongside the sandbox), and warm (`WarmPool.claim`: a warm
  container against a warm spare, whose proxy already listens), the spare's list as the job's
  and another one (its proxy reconfigured in place);
- a 50 MB download from a stand-in host through the proxy, plain HTTP against HTTPS (which Squid
  only tunnels), and each against the same download direct on the uplink.

Run with `uv run python bench/egress.py`; `--load N` runs it while N busy loops hold the CPU.
Goals (issue 35): a warm spare adds < 100 ms until the first command; plain HTTP through the
proxy is at least 0.8x HTTPS through it. The stand-in is a container of the bench's own;
nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
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

BIG = "head -c 52428800 /dev/zero > /srv/www/big"
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
    parser.add_argument("--downloads", type=int, default=5)
    parser.add_argument("--load", type=int, default=0, help="busy loops while it runs")
    args = parser.parse_args()
    deployment = f"bench-egress-{uuid.uuid4().hex[:6]}"
    image, proxy = ensure_image(offline=True), ensure_proxy_image(offline=True)
    through: dict[str, list[float]] = {"http": [], "https": []}
    direct: dict[str, list[float]] = {"http": [], "https": []}
    with outside(image, deployment, {LABEL_DEPLOYMENT: deployment}) as out, _cpu_load(args.load):
        policy = SandboxPolicy(
            image=image, deployment=deployment, proxy_image=proxy, egress_uplink=out.network
        )
        plan = EgressPlan(Allowance((ALLOWED,)))
        other = EgressPlan(Allowance((DENIED,)))
        subprocess.run(["docker", "exec", out.network, "sh", "-c", BIG], check=True)
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
                        fetch = FETCH.format(scheme=scheme, host=ALLOWED)
                        through[scheme].append(float(box.run(fetch).output))
            for _ in range(args.downloads):
                for scheme in direct:
                    direct[scheme].append(_direct(image, out.network, deployment, scheme))
        finally:
            remove_all(deployment)
    print(f"load: {args.load} busy loops on {multiprocessing.cpu_count()} CPUs")
    _print_start("cold start", STARTS["cold none"], STARTS["cold net"], "")
    _print_start("warm spare", STARTS["warm none"], STARTS["warm net"], " (goal < 100 ms)")
    _print_start("warm spare, another list", STARTS["warm none"], STARTS["warm other"], "")
    median = statistics.median
    for scheme in ("http", "https"):
        ratio = median(through[scheme]) / median(direct[scheme])
        print(
            f"50 MB over {scheme:5}: through the proxy {median(through[scheme]) / 1e6:6.1f} MB/s, "
            f"direct {median(direct[scheme]) / 1e6:6.1f} MB/s, ratio {ratio:4.2f}"
        )
    ratio = median(through["http"]) / median(through["https"])
    print(f"through the proxy, HTTP over HTTPS: {ratio:4.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
