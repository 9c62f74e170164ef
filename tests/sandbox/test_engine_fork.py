"""A forked child (a prefork worker's task process) makes its own Docker client: the parent's
keeps its pooled connection to the engine, which the parent's reaper thread may be using."""

from __future__ import annotations

import pytest

from sandbox.engine import client
from tests.support.forked import in_forked_child


@pytest.mark.docker
def test_a_forked_child_makes_its_own_docker_client() -> None:
    parent = client()
    assert parent.ping()
    answer = in_forked_child(lambda: f"{client() is not parent} {client().ping()}")
    assert answer == "True True", answer
    assert client() is parent and parent.ping()  # the parent keeps its own
