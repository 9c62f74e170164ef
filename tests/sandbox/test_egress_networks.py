"""A job's internal network is a /28 of the operator's range, not one of the engine's own pools
(which run out at about 30 networks), and its proxy's address is known before anything starts."""

from __future__ import annotations

import ipaddress
import random
import subprocess
from collections.abc import Iterator

import pytest

from sandbox.engine import SandboxError
from sandbox.naming import LABEL_ROLE, new_token
from sandbox.policy import SandboxPolicy
from sandbox.proxy import ROLE_NETWORK, SUBNET_PREFIX, create_network, egress_labels, remove_network
from tests.sandbox.conftest import DEPLOYMENT

pytestmark = pytest.mark.docker

MORE_THAN_THE_ENGINES_POOLS = 36
LABELS = {**egress_labels(None, DEPLOYMENT, None), LABEL_ROLE: ROLE_NETWORK}


@pytest.fixture
def names() -> Iterator[list[str]]:
    """Networks to make; each one made is removed afterwards."""
    made: list[str] = []
    yield made
    for name in made:
        remove_network(name)


def _name(names: list[str]) -> str:
    names.append(f"resolver-egress-{new_token()}-test")
    return names[-1]


def test_more_networks_than_the_engines_pools_hold_each_get_a_subnet_of_the_range(
    names: list[str],
) -> None:
    default = ipaddress.IPv4Network(SandboxPolicy(image="").egress_subnets)
    count = MORE_THAN_THE_ENGINES_POOLS
    subnets = [create_network(_name(names), LABELS, str(default)) for _ in range(count)]
    assert len(set(subnets)) == count
    assert all(s.prefixlen == SUBNET_PREFIX and s.subnet_of(default) for s in subnets)


def test_a_subnet_another_network_holds_is_skipped_and_a_full_range_is_an_error(
    names: list[str],
) -> None:
    # Two /28s of a documentation range, one of them held by a network of ours.
    pair, free = _held_pair(names)
    assert create_network(_name(names), LABELS, str(pair)) == free
    with pytest.raises(SandboxError, match=rf"no free /28 in .*\({pair}\).*widen it"):
        create_network(_name(names), LABELS, str(pair))


def _held_pair(names: list[str]) -> tuple[ipaddress.IPv4Network, ipaddress.IPv4Network]:
    """A /27 of TEST-NET-2 or -3 whose first /28 a network of ours now holds, and its second:
    a /27 that another run on the engine holds is passed over."""
    ranges = ("198.51.100.0/24", "203.0.113.0/24")
    pairs = [p for r in ranges for p in ipaddress.IPv4Network(r).subnets(new_prefix=27)]
    for pair in random.sample(pairs, len(pairs)):
        held, free = pair.subnets(new_prefix=SUBNET_PREFIX)
        argv = ["docker", "network", "create", "--internal", "--subnet", str(held)]
        argv += [f"--label={key}={value}" for key, value in LABELS.items()]
        name = _name(names)
        if subprocess.run([*argv, name], capture_output=True, check=False).returncode == 0:
            return pair, free
        names.remove(name)
    raise AssertionError("every /27 of TEST-NET-2 and -3 is held on this engine")
