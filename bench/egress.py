"""Egress figures, side by side in one run: a sandbox's cold start without network against one
with its own proxy network, and a 50 MB download from a stand-in host through the proxy against
the same download direct on the uplink. Run with `uv run python bench/egress.py`.

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
sys.path[:] = [e for e in sys.path if Path(e or ".").resolve() != _ROOT / "bench"]
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
FETCH = "curl -k -sS -o /dev/null -w '%{{speed_download}}' https://{host}/big"


def _start(policy: SandboxPolicy, plan: EgressPlan | None, count: int) -> list[float]:
    samples = []
    for n in range(count):
        started = time.perf_counter()
        box = open_sandbox(f"bench-egress-{n}", policy, egress=plan)
        samples.append(time.perf_counter() - started)
        box.__exit__(None, None, None)
    return samples


def _direct(image: str, network: str, deployment: str) -> float:
    argv = ["docker", "run", "--rm", "--network", network, "--label"]
    argv += [f"{LABEL_DEPLOYMENT}={deployment}", image, "sh", "-c", FETCH.format(host=ALLOWED)]
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
        try:
            none = _start(policy, None, args.starts)
            proxied = _start(policy, plan, args.starts)
            with open_sandbox("bench-egress-dl", policy, egress=plan) as box:
                through = [
                    float(box.run(FETCH.format(host=ALLOWED)).output) for _ in range(args.downloads)
                ]
            direct = [_direct(image, out.network, deployment) for _ in range(args.downloads)]
        finally:
            remove_all(deployment)
    extra = (statistics.median(proxied) - statistics.median(none)) * 1000
    ratio = statistics.median(through) / statistics.median(direct)
    print(f"start, no network      median {statistics.median(none) * 1000:8.0f} ms")
    print(f"start, proxy network   median {statistics.median(proxied) * 1000:8.0f} ms")
    print(f"extra start time              {extra:8.0f} ms   (goal < 300 ms)")
    print(f"50 MB through the proxy median {statistics.median(through) / 1e6:7.1f} MB/s")
    print(f"50 MB direct            median {statistics.median(direct) / 1e6:7.1f} MB/s")
    print(f"ratio                          {ratio:7.2f}      (goal >= 0.8)")


if __name__ == "__main__":
    main()
