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


def upgrade() -> None:
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.add_column(sa.Column("origin", sa.String(length=300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.drop_column("origin")
