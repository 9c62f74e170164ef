"""Egress figures, side by side in one run: a sandbox's cold start without network against one
with its own proxy network (until `open_sandbox` returns, and until its first command has run:
the proxy starts alongside the sandbox and is waited for only then), and a 50 MB download
(HTTP and HTTPS) from a stand-in host through the proxy against the same download direct on
the uplink. Run with `uv run python bench/egress.py`.

Goals (issue 21): the proxy adds under 300 ms to a start; its throughput is at least 0.8x of
direct. The stand-in is a container of the bench's own; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT))

from sandbox import (  # noqa: E402
    Allowance,
    EgressPlan,
    SandboxPolicy,
    ensure_image,
    ensure_proxy_image,
    open_sandbox,
    remove_all,
)
from sandbox.naming import LABEL_DEPLOYMENT  # noqa: E402
from tests.sandbox.standins import ALLOWED, outside  # noqa: E402

BIG = "head -c 52428800 /dev/zero > /srv/www/big"
FETCH = "curl -k -sS -o /dev/null -w '%{{speed_download}}' {scheme}://{host}/big"


def _start(
    policy: SandboxPolicy, plan: EgressPlan | None, count: int
) -> tuple[list[float], list[float]]:
    """Per start: seconds until the sandbox is open, and until its first command has run."""
    opened, ready = [], []
    for n in range(count):
        started = time.perf_counter()
        box = open_sandbox(f"bench-egress-{n}", policy, egress=plan)
        opened.append(time.perf_counter() - started)
        box.run("true")
        ready.append(time.perf_counter() - started)
        box.__exit__(None, None, None)
    return opened, ready


def _direct(image: str, network: str, deployment: str, scheme: str) -> float:
    argv = ["docker", "run", "--rm", "--network", network, "--label"]
    fetch = FETCH.format(scheme=scheme, host=ALLOWED)
    argv += [f"{LABEL_DEPLOYMENT}={deployment}", image, "sh", "-c", fetch]
    return float(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--downloads", type=int, default=3)
    args = parser.parse_args()
    deployment = f"bench-egress-{uuid.uuid4().hex[:6]}"
    image, proxy = ensure_image(offline=True), ensure_proxy_image(offline=True)
    with outside(image, deployment, {LABEL_DEPLOYMENT: deployment}) as out:
        policy = SandboxPolicy(
            image=image, deployment=deployment, proxy_image=proxy, egress_uplink=out.network
        )
        plan = EgressPlan(Allowance((ALLOWED,)))
        subprocess.run(["docker", "exec", out.network, "sh", "-c", BIG], check=True)
        through: dict[str, list[float]] = {"http": [], "https": []}
        direct: dict[str, list[float]] = {"http": [], "https": []}
        try:
            none, none_ready = _start(policy, None, args.starts)
            proxied, proxied_ready = _start(policy, plan, args.starts)
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
    median = statistics.median
    for what, bare, behind in (
        ("open", none, proxied),
        ("first command", none_ready, proxied_ready),
    ):
        extra = (median(behind) - median(bare)) * 1000
        print(
            f"until {what + ':':15} no network {median(bare) * 1000:6.0f} ms, "
            f"proxy network {median(behind) * 1000:6.0f} ms, extra {extra:6.0f} ms "
            "(goal < 300 ms)"
        )
    for scheme in ("http", "https"):
        ratio = median(through[scheme]) / median(direct[scheme])
        print(
            f"50 MB over {scheme:5}: through the proxy {median(through[scheme]) / 1e6:6.1f} MB/s, "
            f"direct {median(direct[scheme]) / 1e6:6.1f} MB/s, ratio {ratio:4.2f} (goal >= 0.8)"
        )


if __name__ == "__main__":
    main()
