"""typed triggers: jobs.trigger and notices.context carry a `kind` and a `v`

Revision ID: 0016
Revises: 0015

Each row of the older flat shape is rewritten as the typed value `contract.triggers` reads
(an old row reads anyway; this makes every row the same shape), a batch of rows at a time so
that a large table is never held in memory or locked at once: each batch is committed, and
run again after a stop, the migration carries on where the rows are not typed yet. A notice
keeps its own entries (the request to run once its sender links, its private part). A row
that fits no kind is left as it was: reading it names it.
"""

from collections.abc import Callable, Mapping
from typing import Any, Final

from resolver.contract.triggers import TriggerError, dump_trigger, read_trigger
from resolver.store.migrate import rewrite_in_batches

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

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
    rewrite_in_batches(table, column, lambda row: rewrite(row[column]))


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
