"""User names are unique whatever their case, on SQLite and PostgreSQL alike: the index holds
even against a direct insert, a person linking themself gets the next free name, and an old
database with names that differ only in case is refused at upgrade, naming them."""

import os
from collections.abc import Iterator

import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from resolver.store import accounts
from resolver.store.db import engine_for, session_scope
from resolver.store.migrate import MigrationRefused, upgrade
from resolver.store.models import User
from tests.conftest import _drop_postgres_database, _postgres_database


def test_a_name_in_another_case_is_taken(resolver_env, backend) -> None:
    with session_scope() as session:
        accounts.add_user(session, "Boss", admin=True)
    with pytest.raises(accounts.AccountError, match="as 'Boss'"), session_scope() as session:
        accounts.add_user(session, "boss")
    with pytest.raises(IntegrityError), session_scope() as session:
        session.execute(insert(User).values(name="BOSS", is_admin=False))
    with session_scope() as session:
        assert [user.name for user in accounts.all_users(session)] == ["Boss"]
        with pytest.raises(accounts.AccountError, match="no user named 'boss'"):
            accounts.get_user(session, "boss")  # names are compared exactly


def test_self_linking_takes_the_next_free_name(resolver_env, backend) -> None:
    with session_scope() as session:
        accounts.add_user(session, "Boss", admin=True)
        accounts.add_user(session, "BOSS-2")
        user = accounts.self_link(session, "github", "7200", "boss")
        assert (user.name, user.is_admin) == ("boss-3", False)
        assert accounts.self_link(session, "github", "7200", "boss").id == user.id


def test_a_user_is_renamed_to_a_free_name_only(resolver_env, backend) -> None:
    with session_scope() as session:
        accounts.add_user(session, "ada")
        accounts.add_user(session, "bob")
    with session_scope() as session:
        with pytest.raises(accounts.AccountError, match="'bob' already exists"):
            accounts.rename_user(session, "ada", "Bob")
        assert accounts.rename_user(session, "ada", "Ada").name == "Ada"


@pytest.fixture
def empty_database(tmp_path, backend) -> Iterator[str]:
    """A database with no tables yet, on `backend`."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
        yield url
        engine_for(url).dispose()
        return
    admin = os.environ["RESOLVER_TEST_POSTGRES_URL"]
    url, name = _postgres_database(admin)
    yield url
    engine_for(url).dispose()
    _drop_postgres_database(admin, name)


def test_the_upgrade_names_users_that_differ_only_in_case(empty_database) -> None:
    url = empty_database
    upgrade(url, "0013")
    with engine_for(url).begin() as conn:
        for name in ("Boss", "ada", "boss", "BOSS", "bob"):
            conn.execute(insert(User.__table__).values(name=name, is_admin=False))
    with pytest.raises(MigrationRefused) as refused:
        upgrade(url)
    message = str(refused.value)
    assert "'BOSS', 'Boss', 'boss'" in message and "ada" not in message
    assert "resolver users rename" in message
    with engine_for(url).begin() as conn:
        conn.exec_driver_sql("UPDATE users SET name = 'boss-2' WHERE name = 'BOSS'")
        conn.exec_driver_sql("UPDATE users SET name = 'boss-3' WHERE name = 'boss'")
    upgrade(url)
