"""A list bound as one parameter: the statement is compiled once, whatever the list's length.

SQLAlchemy renders an `IN` of an expanding parameter anew at every execution (a placeholder per
item), which cost a lone mention's few statements more CPU than running them. Bound whole, as a
PostgreSQL array or a SQLite JSON array, the list is a table of one column, `value`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, bindparam, func
from sqlalchemy.dialects import postgresql

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.sql.selectable import TableValuedAlias
    from sqlalchemy.types import TypeEngine

DIALECTS = ("postgresql", "sqlite")


def each(name: str, item: TypeEngine[Any], dialect: str) -> TableValuedAlias:
    """The list bound as `name`, a table of its items in one column, `value`, in list order."""
    if dialect == "postgresql":
        unnest = func.unnest(bindparam(name, type_=postgresql.ARRAY(item)))
        return unnest.table_valued("value").render_derived(name=name)
    # SQLite names no columns of a table-valued function: json_each's own are `value` and more.
    return func.json_each(bindparam(name, type_=JSON)).table_valued("value").alias(name)


def dialect_of(conn: Connection) -> str:
    """The key of a statement built per dialect (`DIALECTS`)."""
    return "postgresql" if conn.dialect.name == "postgresql" else "sqlite"
