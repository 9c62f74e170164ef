"""Each command's unit of work (`in_transaction`), apart from any command's module: a command
imports it without importing another command."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from resolver.store.db import session_scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

P = ParamSpec("P")
T = TypeVar("T")


def in_transaction(
    work: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """`work(session, ...)` in one transaction of its own: the only place a command opens one.
    Committed when `work` returns, rolled back when it raises; a command that must commit
    before going on (before a network call, before printing) calls this once per step, and
    `work` returns plain values, not rows to read after it."""
    with session_scope() as session:
        return work(session, *args, **kwargs)
