"""typed triggers: jobs.trigger and notices.context carry a `kind` and a `v`

Revision ID: 0016
Revises: 0015

Each row of the older flat shape is rewritten as the typed value `contract.triggers` reads
(an old row reads anyway; this makes every row the same shape), a batch of rows at a time so
that a large table is never held in memory at once. A notice keeps its own entries (the
request to run once its sender links, its private part). A row that fits no kind is left as
it was: reading it names it.
"""

from collections.abc import Callable, Mapping
from typing import Any, Final

import sqlalchemy as sa
from alembic import op

from resolver.contract.triggers import TriggerError, dump_trigger, read_trigger

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

BATCH: Final = 500
NOTICE_OWN: Final = ("request", "private")
"""A notice's own entries beside its trigger (`store.notices.PRIVATE` is "private")."""

Rewrite = Callable[[Mapping[str, Any]], dict[str, Any] | None]


def upgrade() -> None:
    _rewrite("jobs", "trigger", _typed(()))
    _rewrite("notices", "context", _typed(NOTICE_OWN))


def downgrade() -> None:
    _rewrite("jobs", "trigger", _flat(()))
    _rewrite("notices", "context", _flat(NOTICE_OWN))


def _rewrite(table: str, column: str, rewrite: Rewrite) -> None:
    """Every row of `table` whose `column` `rewrite` changes, in batches by id."""
    rows = sa.table(table, sa.column("id", sa.Integer), sa.column(column, sa.JSON))
    change = (
        sa.update(rows)
        .where(rows.c.id == sa.bindparam("row_id"))
        .values({column: sa.bindparam("new_value", type_=sa.JSON)})
    )
    bind, last = op.get_bind(), 0
    while True:
        query = sa.select(rows.c.id, rows.c[column]).where(rows.c.id > last).order_by(rows.c.id)
        batch = bind.execute(query.limit(BATCH)).all()
        if not batch:
            return
        changed = [
            {"row_id": row_id, "new_value": new}
            for row_id, value in batch
            if isinstance(value, dict) and (new := rewrite(value)) is not None
        ]
        if changed:
            bind.execute(change, changed)
        last = batch[-1][0]


def _typed(own: tuple[str, ...]) -> Rewrite:
    def rewrite(value: Mapping[str, Any]) -> dict[str, Any] | None:
        if "kind" in value and "v" in value:
            return None
        try:
            typed = dump_trigger(read_trigger({k: v for k, v in value.items() if k not in own}))
        except TriggerError:
            return None
        return {**typed, **{key: value[key] for key in own if key in value}}

    return rewrite


def _flat(own: tuple[str, ...]) -> Rewrite:
    """The flat shape the code before this revision reads, from a typed row."""

    def rewrite(value: Mapping[str, Any]) -> dict[str, Any] | None:
        if not ("kind" in value and "v" in value):
            return None
        try:
            typed = dump_trigger(read_trigger(value))
        except TriggerError:
            return None
        return {**_flatten(typed), **{key: value[key] for key in own if key in value}}

    return rewrite


def _flatten(typed: Mapping[str, Any]) -> dict[str, Any]:
    origin, repo = typed.get("origin") or {}, typed.get("repo")
    flat: dict[str, Any] = {**typed.get("part", {}), **typed.get("reach", {})}
    flat |= {k: v for k, v in origin.items() if v is not None}
    for key in ("title", "body", "url", "label", "number", "comment_id", "assignee"):
        if typed.get(key) is not None:
            flat[key] = typed[key]
    for key in ("head_ref", "head_sha", "base_ref", "review_id", "options"):
        if typed.get(key) is not None:
            flat[key] = typed[key]
    if isinstance(repo, dict):
        flat |= {
            "repo": repo["full_name"],
            "clone_url": repo.get("clone_url"),
            "default_branch": repo.get("default_branch"),
        }
    elif repo is not None:
        flat["repo"] = repo
    kind = typed["kind"]
    pull = kind in ("pull_request", "review_batch", "ci_failure")
    if typed.get("number") is not None:
        flat["is_pull_request"] = pull
        if origin.get("provider") == "gitlab":  # the older shape's own names on GitLab
            flat |= {"iid": typed["number"], "noteable_type": "merge_request" if pull else "issue"}
    flat |= {"review_batch": True} if kind == "review_batch" else {}
    flat |= {"ci": typed["check"]} if kind == "ci_failure" else {}
    flat |= {"base_push": typed["push"]} if kind == "base_push" else {}
    flat |= {"branch": typed["options"].get("branch")} if kind == "chat_thread" else {}
    if kind == "schedule_run":
        flat |= {k: typed[k] for k in ("schedule_id", "run_id", "schedule", "forge_name")}
    if typed.get("planned") is not None:
        flat["forge"] = typed["planned"]
    return flat
