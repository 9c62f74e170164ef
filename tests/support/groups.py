"""The groups `make test` runs one after another (scripts/test), cheapest first, so that a cheap
failure stops the run before the costly groups start. What a test needs decides its group:
- `e2e`: it starts the whole service (tests/e2e, the demo);
- `docker`: it needs the Docker engine (marked by hand, or through the sandbox image fixtures);
- `services`: it needs a migrated database or Redis (through the fixtures that give them);
- none of these: it runs on its own, in process.
The `runsc` group runs the sandbox and security suites and one end-to-end test again, with
RESOLVER_SANDBOX_RUNTIME=runsc (gVisor); they carry the `runsc` mark. The end-to-end test runs
there on one forge: the runtime is the sandbox's, and a forge's path is the same under both.
Under pytest-xdist the longest work goes out first (`DURATIONS`), so that a group does not end
on one worker still running a long test that started late while the others wait.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
SERVICES = frozenset(
    {"resolver_env", "webhook_env", "template_database", "agent_env", "resolver_db", "backend"}
)
DOCKER = frozenset({"image", "sandbox_image", "proxy_image"})
E2E = frozenset({"e2e", "test_demo.py"})  # top-level names under tests/
RUNSC = (("sandbox",), ("security",), ("e2e", "test_mention.py"))  # leading parts under tests/
SHARED_SCOPES = frozenset({"module", "package", "class"})
RUNSC_FORGE = "github"  # the one forge a parametrised end-to-end test runs on under runsc
# Seconds per slow test, from the slowest durations CI prints (the file says which runs): an xdist
# run hands out its work longest first. A test not listed counts as 0 s and keeps its place after
# the listed ones; a stale figure only changes the order.
DURATIONS = Path(__file__).with_name("durations.txt")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
        if parts and parts[0] in E2E:
            item.add_marker(pytest.mark.e2e)
        if any(parts[: len(prefix)] == prefix for prefix in RUNSC) and _runsc_forge(item):
            item.add_marker(pytest.mark.runsc)
        if DOCKER.intersection(item.fixturenames):
            item.add_marker(pytest.mark.docker)
        if SERVICES.intersection(item.fixturenames):
            item.add_marker(pytest.mark.services)
        if _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.partition("::")[0]))
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, and orders, alike
        items[:] = longest_first(items, _durations())


def longest_first(items: list[pytest.Item], seconds: Mapping[str, float]) -> list[pytest.Item]:
    """`items` with the longest work unit first: a test alone, or a module its xdist group sends
    to one worker whole."""
    units = []
    for item in items:
        group = item.get_closest_marker("xdist_group")
        units.append((item.nodeid, str(group.args[0]) if group else item.nodeid))
    return [items[i] for i in work_order(units, seconds)]


def work_order(tests: Sequence[tuple[str, str]], seconds: Mapping[str, float]) -> list[int]:
    """The indices of `tests` (each a node id and its work unit) by their unit's seconds, the
    sum of its tests', highest first; a unit's tests stay together and in order, and ties keep
    the order of the units' first tests."""
    units: dict[str, list[int]] = {}
    for index, (_, unit) in enumerate(tests):
        units.setdefault(unit, []).append(index)
    cost = {u: sum(seconds.get(tests[i][0], 0.0) for i in found) for u, found in units.items()}
    return [index for unit in sorted(units, key=lambda u: -cost[u]) for index in units[unit]]


def _durations() -> dict[str, float]:
    seconds: dict[str, float] = {}
    for line in DURATIONS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            figure, nodeid = line.split(maxsplit=1)
            seconds[nodeid] = seconds.get(nodeid, 0.0) + float(figure)
    return seconds


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether `item` uses a fixture its module's other tests share (a second Docker engine, the
    egress stand-ins): under `--dist loadgroup` its module then goes to one worker whole, and
    starts that fixture once, while every other test goes to whichever worker is free."""
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    return any(defs[-1].scope in SHARED_SCOPES for defs in definitions if defs)


def _runsc_forge(item: pytest.Item) -> bool:
    """Whether `item` is on the forge the runsc group takes, or on none."""
    callspec = getattr(item, "callspec", None)
    forge = callspec.params.get("forge") if callspec is not None else None
    return forge is None or forge == RUNSC_FORGE


@pytest.hookimpl(trylast=True)  # after the slowest durations
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Under scripts/test: the wall time of the groups before, of this one and of the run so far,
    printed before pytest's closing line, which stays the last line of the run."""
    group = os.environ.get("RESOLVER_TEST_GROUP")
    earlier = os.environ.get("RESOLVER_TEST_GROUPS_DONE")
    if not (group and earlier):
        return
    now = time.time()
    terminalreporter.section("wall time per group")
    for line in Path(earlier).read_text().splitlines():
        terminalreporter.write_line(line)
    took = now - float(os.environ["RESOLVER_TEST_GROUP_STARTED"])
    terminalreporter.write_line(f"{group}: {took:.0f} s")
    run = now - float(os.environ["RESOLVER_TEST_RUN_STARTED"])
    terminalreporter.write_line(f"all groups so far: {run:.0f} s")
