"""A forked child (a prefork worker's task process) makes its own Docker client: the parent's
keeps its pooled connection to the engine, which the parent's reaper thread may be using."""

from __future__ import annotations

import os

import pytest

from sandbox.engine import client


@pytest.mark.docker
def test_a_forked_child_makes_its_own_docker_client() -> None:
    parent = client()
    assert parent.ping()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what it sees, and leave without running pytest's exit
        try:
            own = client()
            answer = f"{own is not parent} {own.ping()}"
        except BaseException as error:  # the parent reports it
            answer = f"error {error!r}"
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == "True True", answer
    assert client() is parent and parent.ping()  # the parent keeps its own
