"""users_name_folded: user names are unique whatever their case

Revision ID: 0014
Revises: 0013

Two users whose names differ only in case stop the upgrade, named, before anything changes:
the operator renames all but one (`resolver users rename`) and upgrades again.
"""

import sqlalchemy as sa
from alembic import op

from resolver.store.migrate import MigrationRefused

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    folded = sa.func.lower(sa.column("name"))
    users = sa.table("users", sa.column("name"))
    clashing = (
        sa.select(folded.label("folded"))
        .select_from(users)
        .group_by(folded)
        .having(sa.func.count() > 1)
        .subquery()
    )
    rows = op.get_bind().execute(
        sa.select(users.c.name).where(sa.func.lower(users.c.name).in_(sa.select(clashing.c.folded)))
    )
    names = sorted((name for (name,) in rows), key=lambda name: (name.lower(), name))
    if names:
        raise MigrationRefused(
            "user names must be unique whatever their case, and these differ only in case: "
            f"{', '.join(repr(name) for name in names)}. Rename all but one of each "
            "(`resolver users rename OLD NEW`), then run `resolver db upgrade` again."
        )
    op.create_index("users_name_folded", "users", [sa.text("lower(name)")], unique=True)


def downgrade() -> None:
    op.drop_index("users_name_folded", table_name="users")
