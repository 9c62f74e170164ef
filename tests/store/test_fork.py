"""A forked child (a prefork worker's task process) starts with empty connection pools: the
parent's pooled connection is the parent's, on either database."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import text

from resolver.store.db import get_engine, session_scope
from tests.conftest import ResolverEnv


def _backend_id(session_text: str) -> str:
    with session_scope() as session:
        return str(session.execute(text(session_text)).scalar())


@pytest.mark.usefixtures("backend")
def test_a_forked_child_never_uses_its_parents_pooled_connection(
    resolver_env: ResolverEnv,
) -> None:
    postgres = get_engine().dialect.name == "postgresql"
    # PostgreSQL names the server process a connection talks to; SQLite, the connection object.
    which = "SELECT pg_backend_pid()" if postgres else "SELECT 1"
    parent = _backend_id(which)  # the pool now keeps this connection
    kept = get_engine().pool.checkedin()
    assert kept >= 1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what it sees, and leave without running pytest's exit
        try:
            answer = f"{get_engine().pool.checkedin()} {_backend_id(which)}"
        except BaseException as error:  # the parent reports it
            answer = f"error {error!r}"
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    inherited, child = answer.split(" ", 1)
    assert inherited == "0", answer  # the child's pool started empty
    if postgres:
        assert child != parent  # its own server process: its own connection
    assert _backend_id(which) == parent  # and the parent's connection still works
