"""One credential per owner, provider and kind, on SQLite and PostgreSQL alike: a store is one
upsert, so a second store that read before the first one committed (a person signing in from
two tabs at once) replaces it instead of adding a row; migration 0021 deletes the copies an
older release stored, keeping the one its readers took, and its downgrade gives the older
indexes back."""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from cryptography.fernet import Fernet
from sqlalchemy import event, insert, inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from resolver.contract.signin import IssuedToken
from resolver.core.settings import get_settings
from resolver.store import accounts
from resolver.store.db import engine_for, get_engine, session_scope
from resolver.store.migrate import alembic_config, upgrade
from resolver.store.models import Credential, Installation, User
from resolver.store.secrets import save_oauth_token, stored_token
from resolver.store.vault import Vault

VAULT = Vault([Fernet.generate_key().decode()])
THEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_a_second_sign_in_that_read_before_the_first_committed_replaces_it(
    resolver_env, backend
) -> None:
    with session_scope() as session:
        ada = accounts.add_user(session, "ada").id
    vault = Vault(get_settings().fernet_keys)
    inserting = threading.Event()

    def noticed(_conn, _cursor, statement: str, *_args) -> None:  # type: ignore[no-untyped-def]
        if statement.startswith("INSERT INTO credentials"):
            inserting.set()

    def second_tab() -> None:
        with session_scope() as session:
            save_oauth_token(session, vault, "github", ada, IssuedToken("second-tab-token"))

    with Session(get_engine()) as first, ThreadPoolExecutor(1) as pool:
        save_oauth_token(first, vault, "github", ada, IssuedToken("first-tab-token"))
        event.listen(get_engine(), "before_cursor_execute", noticed)
        try:
            later = pool.submit(second_tab)  # it reads no token: the first is not committed
            assert inserting.wait(timeout=30)
        finally:
            event.remove(get_engine(), "before_cursor_execute", noticed)
        first.commit()
        later.result(timeout=30)

    with session_scope() as session:
        assert len(session.scalars(select(Credential)).all()) == 1
    assert stored_token("github", user_id=ada, settings=get_settings()) == "second-tab-token"


def _row(conn, at: datetime, **values) -> int:  # type: ignore[no-untyped-def]
    stored = {"ciphertext": VAULT.encrypt(f"value-{at:%H%M}"), "updated_at": at, **values}
    return int(conn.execute(insert(Credential.__table__).values(**stored)).inserted_primary_key[0])


def test_the_upgrade_keeps_the_credential_its_readers_took(empty_database: str) -> None:
    url = empty_database
    upgrade(url, "0020")
    with engine_for(url).begin() as conn:  # copies as the previous release could store them
        ada, bob = (
            conn.execute(insert(User.__table__).values(name=name)).inserted_primary_key[0]
            for name in ("ada", "bob")
        )
        repo = conn.execute(
            insert(Installation.__table__).values(provider="mcp", external_id="acme/app")
        ).inserted_primary_key[0]
        token = {"provider": "github", "kind": "oauth"}
        _row(conn, THEN, user_id=ada, **token)
        ada_newest = _row(conn, THEN + timedelta(hours=1), user_id=ada, **token)
        bob_live = _row(conn, THEN, user_id=bob, **token)
        _row(conn, THEN + timedelta(hours=1), user_id=bob, revoked_at=THEN, **token)
        bob_pat = _row(conn, THEN, user_id=bob, provider="github", kind="pat")
        tracker = {"provider": "mcp", "kind": "tracker", "installation_id": repo}
        _row(conn, THEN, **tracker)
        tracker_last = _row(conn, THEN, **tracker)  # stored in the same instant: the later id
        wiki = _row(conn, THEN, provider="mcp", kind="wiki", installation_id=repo)

    upgrade(url)
    with engine_for(url).begin() as conn:
        kept = conn.execute(select(Credential.__table__.c.id).order_by("id")).scalars().all()
        assert kept == sorted([ada_newest, bob_live, bob_pat, tracker_last, wiki])
        with pytest.raises(IntegrityError), conn.begin_nested():
            _row(conn, THEN, **tracker)
        with pytest.raises(IntegrityError), conn.begin_nested():
            _row(conn, THEN, user_id=ada, **token)

    engine_for(url).dispose()
    with warnings.catch_warnings():  # SQLite cannot reflect the users' expression index
        warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression")
        command.downgrade(alembic_config(url), "0020")
        with engine_for(url).begin() as conn:
            indexes = {index["name"] for index in inspect(conn).get_indexes("credentials")}
            _row(conn, THEN, **tracker)  # a copy is possible again
    assert indexes == {"ix_credentials_user_id", "ix_credentials_installation_id"}
