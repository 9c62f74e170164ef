"""credentials.origin: the only origin an MCP server's credential is sent to

Revision ID: 0019
Revises: 0018

An upgraded database has no origin on its credentials: an MCP server's credential stored
before is not sent until the operator binds it to its server's URL (`resolver mcp bind`, or
stores it again), since the origin it was meant for is nowhere recorded.
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both databases (SQLite drops a column since 3.35): a batch would copy
# the table, reflecting the tables its keys refer to, as far as `users`, whose expression index
# SQLAlchemy cannot reflect.


def upgrade() -> None:
    op.add_column("credentials", sa.Column("origin", sa.String(length=300), nullable=True))


def downgrade() -> None:
    op.drop_column("credentials", "origin")
