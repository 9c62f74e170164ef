"""Migration 0018 rewrites every callback payload of the older shape as its typed value, with
its `kind` and `v`, in batches, on SQLite and PostgreSQL alike; a row whose action is not
Resolver's own, or whose payload does not read, stays as it was, and the downgrade gives the
older shape back."""

from __future__ import annotations

from typing import Any

from alembic import command
from sqlalchemy import insert, select

from resolver.contract.callbacks import PAYLOADS, Reply, StatusUpdate, ThreadReply, read_payload
from resolver.store.db import engine_for
from resolver.store.migrate import alembic_config, upgrade
from resolver.store.models import Callback
from tests.callbacks.test_payloads import OLD_SHAPES
from tests.store.test_user_names import empty_database  # noqa: F401 (a fixture)

LEFT_AS_THEY_WERE: list[tuple[str, Any]] = [
    ("status", {"text": "done"}),  # as the upgrade test's release wrote one: no job
    ("post_comment", {"script": ["ok"]}),  # not a kind of Resolver's own
]
MANY = 1_100  # more rows than one batch of the migration (500)


def test_old_payloads_are_rewritten_as_typed_values_and_back(empty_database: str) -> None:  # noqa: F811
    url = empty_database
    upgrade(url, "0017")
    olds = [(model.model_fields["kind"].default, old) for model, old, _ in OLD_SHAPES]
    olds += LEFT_AS_THEY_WERE
    olds += [("reply", {"job_id": 1, "text": f"reply {n}"}) for n in range(MANY)]
    with engine_for(url).begin() as conn:
        conn.execute(
            insert(Callback.__table__),
            [
                {"provider": "github", "action": a, "payload": p, "state": "pending"}
                for a, p in olds
            ],
        )

    upgrade(url)
    rows = _rows(url)
    typed = rows[: len(OLD_SHAPES)]
    assert all((p["kind"], p["v"]) == (a, 1) for a, p in typed)
    assert [read_payload(PAYLOADS[a], p) for a, p in typed] == [t for _, _, t in OLD_SHAPES]
    assert rows[len(OLD_SHAPES) : len(olds) - MANY] == LEFT_AS_THEY_WERE
    replies = [read_payload(Reply, p) for _, p in rows[len(olds) - MANY :]]
    assert [r.text for r in replies] == [f"reply {n}" for n in range(MANY)]

    command.downgrade(alembic_config(url), "0017")
    flats = _rows(url)
    assert flats[0] == ("status", {"job_id": 4})
    assert read_payload(StatusUpdate, flats[0][1]) == StatusUpdate(job_id=4)
    thread = next(p for a, p in flats if a == "thread_reply")
    assert thread == {
        "job_id": 4,
        "where": {"discussion_id": "abc"},
        "text": "Done.",
        "resolve": True,
    }
    assert read_payload(ThreadReply, thread).resolve is True
    assert flats[len(OLD_SHAPES) : len(olds) - MANY] == LEFT_AS_THEY_WERE


def _rows(url: str) -> list[tuple[str, Any]]:
    table = Callback.__table__
    with engine_for(url).connect() as conn:
        query = select(table.c.action, table.c.payload).order_by(table.c.id)
        return [(action, payload) for action, payload in conn.execute(query)]
