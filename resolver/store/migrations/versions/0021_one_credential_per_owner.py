"""credentials_one_per_user, credentials_one_per_installation: one credential per owner and kind

Revision ID: 0021
Revises: 0020

A credential was stored by reading the owner's one, then inserting it when none was found: two
stores at once (a double click on /admin, two tabs) inserted two rows, after which a job sent
either value. A store is now one upsert on a unique key per owner, provider and kind. Copies
already stored are deleted first, keeping the one the readers take: unrevoked before revoked,
then the newest (`updated_at`, then `id`).
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


# Plain CREATE and DROP INDEX on both databases: a batch would copy the table, reflecting the
# tables its keys refer to, as far as `users`, whose expression index SQLAlchemy cannot reflect.
# The unique indexes lead with the owner's column, so they cover the old single-column ones.

_COPIES = sa.text(
    "DELETE FROM credentials WHERE id IN ("
    " SELECT id FROM ("
    "  SELECT id, row_number() OVER ("
    "   PARTITION BY provider, kind, user_id, installation_id"
    "   ORDER BY CASE WHEN revoked_at IS NULL THEN 0 ELSE 1 END, updated_at DESC, id DESC"
    "  ) AS place FROM credentials"
    " ) AS ranked WHERE place > 1)"
)


def upgrade() -> None:
    op.get_bind().execute(_COPIES)
    op.create_index(
        "credentials_one_per_user", "credentials", ["user_id", "provider", "kind"], unique=True
    )
    op.create_index(
        "credentials_one_per_installation",
        "credentials",
        ["installation_id", "provider", "kind"],
        unique=True,
    )
    op.drop_index("ix_credentials_user_id", table_name="credentials")
    op.drop_index("ix_credentials_installation_id", table_name="credentials")


def downgrade() -> None:
    op.create_index("ix_credentials_installation_id", "credentials", ["installation_id"])
    op.create_index("ix_credentials_user_id", "credentials", ["user_id"])
    op.drop_index("credentials_one_per_installation", table_name="credentials")
    op.drop_index("credentials_one_per_user", table_name="credentials")
