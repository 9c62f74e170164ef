"""Signing in and linking at once, in two tabs or two browsers: a forge account maps to one
identity and one user whatever the order, and nobody gets a 500 or a refusal that a press one
after the other would not get. On SQLite and PostgreSQL, through the app."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from resolver.core.settings import get_settings
from resolver.ingress.links import link_url
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.models import Identity, User, WebSession
from tests.web.conftest import browser, csrf_of, sign_in

ADA_ID = 583231


def _at_once(count: int, act: Callable[[int], object]) -> list[object]:
    start = threading.Barrier(count)

    def run(n: int) -> object:
        start.wait()
        return act(n)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def _rows(model: type) -> list[tuple[object, ...]]:
    with session_scope() as session:
        if model is User:
            return [(u.name,) for u in session.scalars(select(User))]
        if model is Identity:
            found = session.scalars(select(Identity))
            return [(i.provider, i.external_id, i.user_id) for i in found]
        return [(s.external_id,) for s in session.scalars(select(WebSession))]


def _side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each press reaches `accounts.self_link` before the other has committed (on PostgreSQL;
    SQLite's one writer lets the second through only after the first's commit, so it waits
    for it no longer than a second)."""
    real = accounts.self_link
    meet = threading.Barrier(2, timeout=1)

    def side_by_side(*args: object) -> object:
        with contextlib.suppress(threading.BrokenBarrierError):  # SQLite: the other waits
            meet.wait()
        return real(*args)

    monkeypatch.setattr(accounts, "self_link", side_by_side)


def test_two_first_sign_ins_at_once_make_two_sessions_and_no_user(app, forge, backend) -> None:
    forge.sign_in_as("ada", user_id=ADA_ID)
    tabs = [browser(app), browser(app)]
    sent = _at_once(2, lambda n: sign_in(tabs[n], forge, "ada"))
    assert sent == ["/jobs", "/jobs"]
    assert all(tab.get("/me").status_code == 200 for tab in tabs)
    assert _rows(User) == [] and _rows(Identity) == []
    assert _rows(WebSession) == [(str(ADA_ID),)] * 2


def _two_tabs(app, forge) -> tuple[list[TestClient], str]:
    forge.sign_in_as("ada", user_id=ADA_ID)
    first = browser(app)
    sign_in(first, forge, "ada")
    second = browser(app)
    second.cookies.update(first.cookies)
    return [first, second], csrf_of(first, "/me")


def _link(settings_url: str) -> str:
    return settings_url.removeprefix("http://testserver")


def test_one_link_claimed_in_two_tabs_at_once_links_once(app, forge, backend) -> None:
    tabs, token = _two_tabs(app, forge)
    link = _link(link_url(get_settings(), "github", str(ADA_ID), "ada"))
    answers = _at_once(2, lambda n: tabs[n].post(link, data={"csrf": token}).status_code)
    assert sorted(answers) == [303, 410]
    assert _rows(User) == [("ada",)] and len(_rows(Identity)) == 1


def test_two_links_of_one_account_claimed_at_once_link_it_once(
    app, forge, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two notices' links for ada's account (two requests she made before she was linked),
    opened in two tabs and pressed at once: both link her, to one user."""
    tabs, token = _two_tabs(app, forge)
    links = [_link(link_url(get_settings(), "github", str(ADA_ID), "ada")) for _ in tabs]
    _side_by_side(monkeypatch)
    answers = _at_once(2, lambda n: tabs[n].post(links[n], data={"csrf": token}))
    assert [a.status_code for a in answers] == [303, 303], [a.text for a in answers]
    assert _rows(User) == [("ada",)]
    assert [row[:2] for row in _rows(Identity)] == [("github", str(ADA_ID))]
