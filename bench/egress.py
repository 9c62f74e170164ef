"""Egress figures, side by side in one run:
- the start of a job with network over one without, until its first command has run: cold
  (`open_sandbox`: the proxy starts alongside the sandbox), and warm (`WarmPool.claim`: a warm
  container against a warm spare, whose proxy already listens), the spare's list as the job's
  and another one (its proxy reconfigured in place);
- downloads of the sizes a package manager fetches (100 KB, 1 MB and 10 MB wheels and
  tarballs, several on one connection as an installer does) and a large one, from one stand-in
  server process, by the same client (curl), five ways: plain HTTP that Squid forwards, the same
  plain bytes from the same server through a CONNECT tunnel (so that only Squid's path differs),
  HTTPS (which Squid only tunnels), and both direct on the uplink. The ways take turns within
  each round (plain HTTP forwarded and HTTPS one right after the other, the order reversed
  every other round), and each figure is the median over the rounds with its spread (the
  lowest and highest round), the ratios taken per round. Beside each: the CPU
  milliseconds per MB it cost the proxy, the client's container and the stand-in (from the
  engine's cgroups, where the host has them), and the proxy's write calls per MB (from
  /proc, where the bench may read the proxy's), which, unlike a rate, hardly move with the
  host's load.

Run with `uv run python bench/egress.py`; `--load N` runs it while N busy loops hold the CPU;
`--starts 0` only downloads.
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
from dataclasses import dataclass
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
from tests.sandbox.standins import ALLOWED, DENIED, OTHER_PORT, outside  # noqa: E402

STARTS: dict[str, list[float]] = {}
"""Seconds until the first command, per kind of start."""
LOAD_SECONDS = 900.0
"""A busy loop stops by itself after this long, whatever happens to the bench."""
MB = 1024 * 1024
SMALL = ((100 * 1024, 20), (MB, 10), (10 * MB, 3))
"""A package manager's downloads: (bytes, how many per round, on one connection)."""
# Each transfer's seconds and bytes, one line each; `-f`: a refusal is an error, not a fast
# download.
FETCH = "curl -f -k -sS {options} -w '%{{time_total}} %{{size_download}}\\n' {urls}"


@dataclass(frozen=True)
class Way:
    """One way to download a file: through the proxy (the sandbox's own environment names it)
    or direct on the uplink, with the curl options and URL it takes."""

    name: str
    proxied: bool
    options: str
    url: str

    def command(self, file: str, count: int) -> str:
        url = self.url.format(host=ALLOWED, port=OTHER_PORT, file=file)
        return FETCH.format(options=self.options, urls=" ".join([f"-o /dev/null {url}"] * count))


WAYS = (
    Way("HTTP, forwarded", True, "", "http://{host}/{file}"),
    Way("HTTPS, tunnelled", True, "", "https://{host}/{file}"),
    # The same server process and bytes as the first, in a CONNECT tunnel (a port the allowance
    # lists may be tunnelled to): only Squid's path differs.
    Way("HTTP, tunnelled", True, "--proxytunnel", "http://{host}:{port}/{file}"),
    Way("HTTP, direct", False, "", "http://{host}/{file}"),
    Way("HTTPS, direct", False, "", "https://{host}/{file}"),
)
FORWARDED, HTTPS, TUNNELLED = (way.name for way in WAYS[:3])


@dataclass(frozen=True)
class Download:
    """One round's downloads of one size by one way: how many MB in all, the rate (bytes/s over
    the transfers' own time), the CPU seconds they cost the proxy, the client's container and
    the stand-in, and the proxy's write calls; None where the host does not show them."""

    megabytes: float
    rate: float
    cpu: tuple[float | None, ...]
    writes: int | None


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


def _write_calls(pid: int) -> int | None:
    """How many write calls the process has made (its /proc io; None where it is not ours)."""
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return None
    return int(dict(line.split(": ") for line in text.splitlines())["syscw"])


def _docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout


@dataclass(frozen=True)
class Rig:
    """The sandbox behind the proxy, a container direct on the uplink, and the stand-in."""

    box: Sandbox
    direct: str
    stand_in: str
    proxy_pid: int

    def download(self, way: Way, size: int, count: int) -> Download:
        assert self.box.egress is not None
        client = self.box.container_id if way.proxied else self.direct
        ids = (self.box.egress.container_id, client, self.stand_in)
        before = [_cpu_seconds(container) for container in ids]
        writes = _write_calls(self.proxy_pid)
        command = way.command(str(size), count)
        if way.proxied:
            done = self.box.run(command)
            exit_code, output = done.exit_code, done.output
        else:
            argv = ["docker", "exec", self.direct, "sh", "-c", command]
            ran = subprocess.run(argv, capture_output=True, text=True, check=False)
            exit_code, output = ran.returncode, ran.stdout + ran.stderr
        after = [_cpu_seconds(container) for container in ids]
        writes_after = _write_calls(self.proxy_pid)
        lines = [line.split() for line in output.splitlines()]
        if exit_code != 0 or [int(got) for _, got in lines] != [size] * count:
            raise RuntimeError(f"{way.name}, {size} bytes: {output.strip()}")
        spent = tuple(
            None if a is None or b is None else b - a for a, b in zip(before, after, strict=True)
        )
        calls = None if writes is None or writes_after is None else writes_after - writes
        seconds = sum(float(taken) for taken, _ in lines)
        return Download(size * count / MB, size * count / seconds, spent, calls)


def _downloads(
    rig: Rig, sizes: list[tuple[int, int]], rounds: int
) -> dict[tuple[int, str], list[Download]]:
    """Per size and way, a download per round. Within a round the ways take turns: plain HTTP
    forwarded and HTTPS (the goal's pair) one right after the other, then the others, the order
    reversed every other round."""
    done: dict[tuple[int, str], list[Download]] = {}
    for n in range(rounds):
        for size, count in sizes:
            for way in WAYS if n % 2 == 0 else WAYS[:2][::-1] + WAYS[2:][::-1]:
                done.setdefault((size, way.name), []).append(rig.download(way, size, count))
    return done


def _spread(values: list[float], form: str) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{mid:{form}} [{low:{form}}-{high:{form}}]"


def _per_mb(runs: list[Download], value: Callable[[Download], float | None], form: str) -> str:
    known = [per / run.megabytes for run in runs if (per := value(run)) is not None]
    return f"{statistics.median(known):{form}}" if known else "n/a"


def _label(size: int) -> str:
    return f"{size // MB} MB" if size >= MB else f"{size // 1024} KB"


def _print_downloads(done: dict[tuple[int, str], list[Download]], sizes: list[int]) -> None:
    print("downloads, per way: MB/s as the median [lowest-highest] of the rounds; per MB, the")
    print("CPU ms of the proxy / the client / the stand-in, and the proxy's write calls")
    for size in sizes:
        for way in WAYS:
            runs = done[(size, way.name)]
            rate = _spread([run.rate / 1e6 for run in runs], "6.1f")
            cpu = " / ".join(_per_mb(runs, _ms(who), "5.2f") for who in range(3))
            writes = _per_mb(runs, lambda run: run.writes, "4.0f")
            print(f"{_label(size):>6} {way.name:17} {rate} MB/s  CPU {cpu}  writes {writes}")
    print("through the proxy, HTTP forwarded over HTTPS (the goal, >= 0.8) and over the same")
    print("bytes tunnelled, per round: median [lowest-highest]; and HTTPS's CPU per MB (the")
    print("proxy's, the client's and the stand-in's together) over HTTP's, the ratio of rates a")
    print("host whose CPUs are all busy would give them")
    for size in sizes:
        print(
            f"{_label(size):>6} over HTTPS {_ratio(done, size, HTTPS)}, over tunnelled "
            f"{_ratio(done, size, TUNNELLED)}; CPU {_cpu_ratio(done, size)}"
        )


def _ms(who: int) -> Callable[[Download], float | None]:
    """The CPU milliseconds a download cost the proxy (0), the client (1) or the stand-in (2)."""

    def ms(run: Download) -> float | None:
        seconds = run.cpu[who]
        return None if seconds is None else seconds * 1000

    return ms


def _cpu_ratio(done: dict[tuple[int, str], list[Download]], size: int) -> str:
    def per_mb(way: str) -> float | None:
        runs = done[(size, way)]
        known = [(run, [cpu for cpu in run.cpu if cpu is not None]) for run in runs]
        spent = [sum(cpus) / run.megabytes for run, cpus in known if len(cpus) == len(run.cpu)]
        return statistics.median(spent) if spent else None

    plain, secure = per_mb(FORWARDED), per_mb(HTTPS)
    return "n/a" if plain is None or secure is None else f"{secure / plain:4.2f}"


def _ratio(done: dict[tuple[int, str], list[Download]], size: int, other: str) -> str:
    pairs = zip(done[(size, FORWARDED)], done[(size, other)], strict=True)
    return _spread([plain.rate / versus.rate for plain, versus in pairs], "4.2f")


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


def _starts(policy: SandboxPolicy, plan: EgressPlan, other: EgressPlan, count: int) -> None:
    cold = {
        "cold none": lambda n: open_sandbox(f"bench-cold-{n}", policy),
        "cold net": lambda n: open_sandbox(f"bench-cold-net-{n}", policy, egress=plan),
    }
    _until_first_command(cold, count, lambda: None)
    pool = WarmPool(policy, 1, plan)
    try:
        warm = {"warm none": None, "warm net": plan, "warm other": other}
        claims = {name: _warm_claim(pool, wanted) for name, wanted in warm.items()}
        _until_first_command(claims, count, _refilled(pool))
    finally:
        pool.close()


@contextmanager
def _rig(policy: SandboxPolicy, image: str, deployment: str, stand_in: str) -> Iterator[Rig]:
    """A sandbox whose proxy lets it reach the stand-in on the web's ports and on OTHER_PORT,
    and a container direct on the uplink."""
    allowance = Allowance((ALLOWED,), ports=((ALLOWED, OTHER_PORT),))
    argv = ["run", "-d", "--rm", "--network", policy.egress_uplink, "--label"]
    argv += [f"{LABEL_DEPLOYMENT}={deployment}", image, "sleep", str(int(LOAD_SECONDS))]
    direct = _docker(*argv).strip()
    try:
        with open_sandbox("bench-egress-dl", policy, egress=EgressPlan(allowance)) as box:
            box.run("true")  # the proxy listens
            assert box.egress is not None
            pid = int(_docker("inspect", "-f", "{{.State.Pid}}", box.egress.container_id))
            yield Rig(box, direct, stand_in, pid)
    finally:
        _docker("rm", "-f", direct)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7, help="rounds of downloads")
    parser.add_argument("--megabytes", type=int, default=100, help="size of the large download")
    parser.add_argument("--load", type=int, default=0, help="busy loops while it runs")
    args = parser.parse_args()
    started_load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    deployment = f"bench-egress-{uuid.uuid4().hex[:6]}"
    image, proxy = ensure_image(offline=True), ensure_proxy_image(offline=True)
    sizes = [*SMALL, (args.megabytes * MB, 1)]
    with outside(image, deployment, {LABEL_DEPLOYMENT: deployment}) as out, _cpu_load(args.load):
        policy = SandboxPolicy(
            image=image, deployment=deployment, proxy_image=proxy, egress_uplink=out.network
        )
        files = " && ".join(f"head -c {size} /dev/urandom > /srv/www/{size}" for size, _ in sizes)
        _docker("exec", out.network, "sh", "-c", files)
        stand_in = _docker("inspect", "-f", "{{.Id}}", out.network).strip()  # named as its network
        try:
            plan, other = EgressPlan(Allowance((ALLOWED,))), EgressPlan(Allowance((DENIED,)))
            if args.starts:
                _starts(policy, plan, other, args.starts)
            with _rig(policy, image, deployment, stand_in) as rig:
                done = _downloads(rig, sizes, args.rounds)
        finally:
            remove_all(deployment)
    loads = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load: {args.load} busy loops on {multiprocessing.cpu_count()} CPUs")
    print(f"load average at the start {started_load}, at the end {loads}")
    if args.starts:
        _print_start("cold start", STARTS["cold none"], STARTS["cold net"], "")
        _print_start("warm spare", STARTS["warm none"], STARTS["warm net"], " (goal < 100 ms)")
        _print_start("warm spare, another list", STARTS["warm none"], STARTS["warm other"], "")
    _print_downloads(done, [size for size, _ in sizes])


if __name__ == "__main__":
    main()
