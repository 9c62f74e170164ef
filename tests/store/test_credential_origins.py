"""Migration 0019 adds the origin an MCP server's credential is bound to. A credential stored
before reads after the upgrade, on SQLite and PostgreSQL alike, with no origin (so it is not
sent), until the operator binds it; the downgrade gives the older table back."""

from __future__ import annotations

import warnings

from alembic import command
from cryptography.fernet import Fernet
from sqlalchemy import insert
from sqlalchemy.orm import Session

from resolver.contract.mcp import credential_withheld, parse_origin
from resolver.store.db import engine_for
from resolver.store.mcp_credentials import (
    bind_mcp_credential,
    list_mcp_credentials,
    mcp_credentials,
)
from resolver.store.migrate import alembic_config, upgrade
from resolver.store.models import Credential, Installation
from resolver.store.vault import Vault
from tests.store.test_user_names import empty_database  # noqa: F401 (a fixture)

VAULT = Vault([Fernet.generate_key().decode()])
TRACKER = "https://mcp.tracker.example/mcp"


def test_a_credential_stored_before_origins_reads_unbound_until_bound(empty_database: str) -> None:  # noqa: F811
    url = empty_database
    upgrade(url, "0018")
    with engine_for(url).begin() as conn:  # the row as the previous release stored it
        owner = conn.execute(
            insert(Installation.__table__).values(provider="mcp", external_id="acme/app")
        ).inserted_primary_key[0]
        conn.execute(
            insert(Credential.__table__).values(
                provider="mcp",
                kind="tracker",
                scope="X-Api-Key",
                ciphertext=VAULT.encrypt("key-before-origins"),
                installation_id=owner,
            )
        )

    upgrade(url)
    with Session(engine_for(url)) as session:
        [stored] = mcp_credentials(session, VAULT, "acme/app", ("tracker",)).values()
        assert (stored.header, stored.value.reveal(), stored.origin) == (
            "X-Api-Key",
            "key-before-origins",
            None,
        )
        [listed] = list_mcp_credentials(session)
        assert (listed.server, listed.origin) == ("tracker", None)
        why = credential_withheld(parse_origin(TRACKER), stored.origin, "tracker")
        assert why is not None and "resolver mcp bind" in why

        assert bind_mcp_credential(session, "acme/app", "tracker", parse_origin(TRACKER))
        assert not bind_mcp_credential(session, "acme/app", "docs", parse_origin(TRACKER))
        session.commit()
    with Session(engine_for(url)) as session:
        [bound] = mcp_credentials(session, VAULT, "acme/app", ("tracker",)).values()
        assert bound.origin == "https://mcp.tracker.example"
        assert bound.value.reveal() == "key-before-origins"  # its value kept
        assert credential_withheld(parse_origin(TRACKER), bound.origin, "tracker") is None

    engine_for(url).dispose()
    with warnings.catch_warnings():  # SQLite's batch copy reflects what it cannot read
        warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression")
        command.downgrade(alembic_config(url), "0018")
    with engine_for(url).connect() as conn:
        columns = set(conn.exec_driver_sql("SELECT * FROM credentials").keys())
    assert "origin" not in columns and "scope" in columns
