"""Server-side web sessions and one-time links, on both databases: a session lives while its
row does, within its absolute lifetime and idle timeout, and its last-seen time is written at
most once a `TOUCH`; a link is used once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from sqlalchemy import select

from resolver.store import accounts, used_links, web_sessions
from resolver.store.db import session_scope
from resolver.store.models import WebSession, utcnow

LIFETIMES = web_sessions.Lifetimes(absolute=timedelta(hours=12), idle=timedelta(hours=2))
START = utcnow()


def _open(provider: str = "github", external_id: str = "7") -> str:
    with session_scope() as session:
        return web_sessions.open_session(session, provider, external_id, START)


def _find(key: str, after: timedelta) -> web_sessions.Live | None:
    with session_scope() as session:
        return web_sessions.find(session, key, START + after, LIFETIMES)


def _seen(key: str):
    with session_scope() as session:
        row = session.scalar(
            select(WebSession).where(WebSession.key_hash == web_sessions.digest(key))
        )
        return None if row is None else row.seen_at


def test_only_a_hash_of_the_key_is_stored(resolver_env, backend) -> None:
    key = _open()
    with session_scope() as session:
        [stored] = session.scalars(select(WebSession.key_hash))
    assert key not in stored and stored == web_sessions.digest(key)
    assert _find(key, timedelta(0)) is not None
    assert _find(key + "x", timedelta(0)) is None


def test_use_keeps_a_session_until_its_absolute_lifetime(resolver_env, backend) -> None:
    key = _open()
    for hour in range(1, 12):  # seen every hour: never idle
        assert _find(key, timedelta(hours=hour)) is not None
    assert _find(key, timedelta(hours=12)) is None
    assert _find(key, timedelta(hours=1)) is None, "the row is gone"


def test_an_idle_session_ends(resolver_env, backend) -> None:
    key = _open()
    assert _find(key, timedelta(minutes=119)) is not None
    assert _find(key, timedelta(minutes=119 + 119)) is not None, "use moved last-seen on"
    assert _find(key, timedelta(minutes=238 + 120)) is None


def test_last_seen_is_written_at_most_once_a_minute(resolver_env, backend) -> None:
    key = _open()
    _find(key, timedelta(seconds=30))
    assert _seen(key) == START
    _find(key, timedelta(seconds=61))
    assert _seen(key) == START + timedelta(seconds=61)


def test_a_rotated_key_keeps_the_sign_in_time(resolver_env, backend) -> None:
    old = _open()
    with session_scope() as session:
        new = web_sessions.rotate(session, old, START + timedelta(hours=11))
    assert new is not None and new != old
    assert _find(old, timedelta(hours=11)) is None
    assert _find(new, timedelta(hours=11)) is not None
    assert _find(new, timedelta(hours=12)) is None, "counted from sign-in"


def test_ending_everywhere_ends_every_account_of_the_user(resolver_env, backend) -> None:
    with session_scope() as session:
        accounts.add_user(session, "ada")
        accounts.link_identity(session, "ada", "github", "7", "ada")
        accounts.link_identity(session, "ada", "gitlab", "70", "ada")
    github, gitlab, other = _open("github", "7"), _open("gitlab", "70"), _open("github", "8")
    with session_scope() as session:
        assert web_sessions.end_everywhere(session, "gitlab", "70") == 2
    assert _find(github, timedelta(0)) is None and _find(gitlab, timedelta(0)) is None
    assert _find(other, timedelta(0)) is not None
    lone = _open("operator", "operator")
    with session_scope() as session:
        assert web_sessions.end_everywhere(session, "operator", "operator") == 1
    assert _find(lone, timedelta(0)) is None


def test_revoking_a_link_ends_that_persons_sessions(resolver_env, backend) -> None:
    with session_scope() as session:
        accounts.add_user(session, "ada")
        identity = accounts.link_identity(session, "ada", "github", "7", "ada")
        session.flush()
        identity_id = identity.id
    key = _open("github", "7")
    with session_scope() as session:
        assert accounts.revoke_link(session, identity_id) is not None
    assert _find(key, timedelta(0)) is None


def test_a_sweep_deletes_sessions_past_a_lifetime(resolver_env, backend) -> None:
    stale, fresh = _open(), _open()
    _find(fresh, timedelta(hours=1.5))
    with session_scope() as session:
        assert web_sessions.sweep(session, START + timedelta(hours=3), LIFETIMES) == 1
    assert _find(stale, timedelta(hours=3)) is None
    assert _find(fresh, timedelta(hours=3)) is not None


def test_a_link_is_used_once_until_it_expires(resolver_env, backend) -> None:
    expires = START + timedelta(hours=1)
    with session_scope() as session:
        assert used_links.use(session, "link:a", expires, START)
        assert not used_links.use(session, "link:a", expires, START)
        assert used_links.use(session, "link:b", expires, START), "another link"
    with session_scope() as session:
        assert used_links.was_used(session, "link:a")
        assert not used_links.use(session, "link:a", expires, START + timedelta(minutes=5))
        # Past its expiry the record goes (the link itself no longer opens by then).
        assert used_links.use(session, "link:a", expires, expires + timedelta(seconds=1))


def test_of_two_uses_at_once_one_wins(resolver_env, backend) -> None:
    expires = START + timedelta(hours=1)

    def use(_: int) -> bool:
        with session_scope() as session:
            return used_links.use(session, "operator:nonce", expires, utcnow())

    with ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(use, range(8))) == [False] * 7 + [True]
