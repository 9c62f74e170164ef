"""typed callbacks: callbacks.payload carries a `kind` and a `v`

Revision ID: 0018
Revises: 0017

Each payload of the older shape is rewritten as the typed value `contract.callbacks` reads for
its row's action (an old row reads anyway, and so does one a worker of the previous release
writes during a rolling deploy; this makes every row the same shape), a batch of rows at a time.
A row whose action is not one of Resolver's own, or whose payload does not read, is left as it
was: sending it names what is wrong. The downgrade drops `kind` and `v`, the older shape.
"""

from collections.abc import Callable, Mapping
from typing import Final

import sqlalchemy as sa
from alembic import op

from resolver.contract.callbacks import PAYLOADS, CallbackPayloadError, dump_payload, read_payload

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

BATCH: Final = 500
_ROWS = sa.table(
    "callbacks",
    sa.column("id", sa.Integer),
    sa.column("action", sa.String),
    sa.column("payload", sa.JSON),
)


def upgrade() -> None:
    _rewrite(_typed)


def downgrade() -> None:
    _rewrite(_flat)


def _rewrite(rewrite: Callable[[str, Mapping[str, object]], Mapping[str, object] | None]) -> None:
    """Every callback row whose payload `rewrite` changes, in batches by id."""
    change = (
        sa.update(_ROWS)
        .where(_ROWS.c.id == sa.bindparam("row_id"))
        .values(payload=sa.bindparam("new_payload", type_=sa.JSON))
    )
    bind, last = op.get_bind(), 0
    while True:
        query = sa.select(_ROWS.c.id, _ROWS.c.action, _ROWS.c.payload).where(_ROWS.c.id > last)
        batch = bind.execute(query.order_by(_ROWS.c.id).limit(BATCH)).all()
        if not batch:
            return
        changed = [
            {"row_id": row_id, "new_payload": new}
            for row_id, action, payload in batch
            if isinstance(payload, dict) and (new := rewrite(action, payload)) is not None
        ]
        if changed:
            bind.execute(change, changed)
        last = batch[-1][0]


def _typed(action: str, payload: Mapping[str, object]) -> Mapping[str, object] | None:
    model = PAYLOADS.get(action)
    if model is None or ("kind" in payload and "v" in payload):
        return None
    try:
        return dump_payload(read_payload(model, payload))
    except CallbackPayloadError:
        return None


def _flat(action: str, payload: Mapping[str, object]) -> Mapping[str, object] | None:
    if not ("kind" in payload and "v" in payload):
        return None
    return {key: value for key, value in payload.items() if key not in ("kind", "v")}

