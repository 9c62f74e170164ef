"""typed callbacks: callbacks.payload carries a `kind` and a `v`

Revision ID: 0018
Revises: 0017

Each payload of the older shape is rewritten as the typed value `contract.callbacks` reads for
its row's action (an old row reads anyway, and so does one a worker of the previous release
writes during a rolling deploy; this makes every row the same shape), a batch of rows at a time,
each batch committed (run again after a stop, it carries on where the rows are not typed yet).
A row whose action is not one of Resolver's own, or whose payload does not read, is left as it
was: sending it names what is wrong. The downgrade drops `kind` and `v`, the older shape.
"""

from collections.abc import Callable, Mapping

from resolver.contract.callbacks import PAYLOADS, CallbackPayloadError, dump_payload, read_payload
from resolver.store.migrate import rewrite_in_batches

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _rewrite(_typed)


def downgrade() -> None:
    _rewrite(_flat)


def _rewrite(rewrite: Callable[[str, Mapping[str, object]], Mapping[str, object] | None]) -> None:
    """Every callback row whose payload `rewrite` changes, in batches by id."""
    rewrite_in_batches(
        "callbacks", "payload", lambda row: rewrite(row["action"], row["payload"]), ("action",)
    )


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

