"""A forked child (a prefork worker's task process) starts with empty connection pools: the
parent's pooled connection is the parent's, on either database."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from resolver.store.db import get_engine, session_scope
from tests.conftest import ResolverEnv
from tests.support.forked import in_forked_child


def _backend_id(session_text: str) -> str:
    with session_scope() as session:
        return str(session.execute(text(session_text)).scalar())


@pytest.mark.usefixtures("backend")
def test_a_forked_child_never_uses_its_parents_pooled_connection(
    resolver_env: ResolverEnv,
) -> None:
    postgres = get_engine().dialect.name == "postgresql"
    # PostgreSQL names the server process a connection talks to; SQLite has no such name.
    which = "SELECT pg_backend_pid()" if postgres else "SELECT 1"
    parent = _backend_id(which)  # the pool now keeps this connection
    kept = get_engine().pool.checkedin()
    assert kept >= 1
    answer = in_forked_child(lambda: f"{get_engine().pool.checkedin()} {_backend_id(which)}")
    inherited, child = answer.split(" ", 1)
    assert inherited == "0", answer  # the child's pool started empty
    if postgres:
        assert child != parent  # its own server process: its own connection
    assert _backend_id(which) == parent  # and the parent's connection still works
