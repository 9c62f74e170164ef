"""Every web route and method, read from the route table (a new route is walked without a change
here), as a stranger, a reader, a pusher and an admin, with generated path segments, queries and
form bodies: nothing answers 500, and without the session's CSRF token nothing changes a row.
With the token, the buttons may act, and still answer no 500."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update

from integrations import registry
from resolver.core.settings import Settings, get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.models import Base, Job
from resolver.web.routes import web_routes
from tests.conftest import reset_caches
from tests.schedules.helpers import make_schedule
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in

EXAMPLES = 15
PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
QUERY_NAMES = ("before", "limit", "after", "next", "state", "code", "error", "repo", "source")
FORM_NAMES = ("csrf", "name", "owner", "organisation", "credential", "config_token", "scope")
# Settings the walk leaves pointing where they are: the stores, the site, the GitHub stand-in.
KEPT_URLS = {"database_url", "redis_url", "public_url", "github_api_url", "github_web_url"}
NOWHERE = "http://127.0.0.1:9"
"""Every other service's address: a refused connection, so no button reaches the internet."""

# Values a path or query might carry: the seeded ids, numbers too big or not ASCII, the
# providers' names, any text.
ODD = ["1", "2", "3", "²", "9" * 25, "-1", "0", "\uff11", "%", "..", "\n", "a/b", ""]
odd = st.sampled_from(ODD)
names = st.sampled_from(registry.names())
segment = st.one_of(odd, names, st.integers(0, 10**20).map(str), st.text(max_size=24))
query = st.lists(st.tuples(st.sampled_from(QUERY_NAMES), segment), max_size=4)
form = st.lists(st.tuples(st.sampled_from(FORM_NAMES), segment), max_size=4)


@dataclass(frozen=True)
class Call:
    method: str
    template: str


def walked() -> list[Call]:
    """Each web route's methods, and the other of GET and POST (a 405)."""
    found = []
    for route in web_routes(get_settings()):
        path = getattr(route, "path", "")
        methods = getattr(route, "methods", None)
        if methods is None:  # a Mount: the static files
            path, methods = path + "/{path}", {"GET"}
        found += [Call(m, path) for m in sorted({*methods, "GET", "POST"} - {"HEAD"})]
    return found


def rows() -> dict[str, list[str]]:
    """Every row of every table, to compare before and after."""
    with session_scope() as session:
        return {
            table.name: sorted(map(repr, session.execute(select(table)).all()))
            for table in Base.metadata.sorted_tables
        }


def seed() -> None:
    """Something for each id to find: jobs 1 and 2, identity 1, schedule 1."""
    with session_scope() as session:
        user = accounts.add_user(session, "ada")
        accounts.link_identity(session, "ada", "github", "583231", login="ada")
        user_id = user.id
    new_job(repo=SECRET_REPO, requester="ada", requester_id=user_id)
    new_job(repo="octo/public")
    make_schedule("weekly-tidy", SECRET_REPO)
    end_every_job()


def end_every_job() -> None:
    """No job is left running: a running job's event stream stays open for minutes, and no
    worker runs here to end one that Run again or Run now made."""
    with session_scope() as session:
        session.execute(update(Job).values(state="succeeded", outcome="answered"))


@pytest.fixture
def nowhere(forge, resolver_env, monkeypatch: pytest.MonkeyPatch) -> None:
    providers = [name for kind in registry.settings_classes() for name in kind.names()]
    for name in [*Settings.model_fields, *providers]:
        if name.endswith("_url") and name not in KEPT_URLS:
            monkeypatch.setenv(f"RESOLVER_{name.upper()}", NOWHERE)
    reset_caches()


def _send(client: Any, call: Call, path: str, params: list, data: dict[str, str]) -> Any:
    if call.method == "POST":
        return client.post(path, params=params, data=data)
    return client.get(path, params=params)


@pytest.mark.parametrize("login", [None, "nick", "rita", "wendy", "root"])
def test_no_route_fails_or_acts_without_the_csrf_token(nowhere, forge, login) -> None:
    from resolver.app import create_app

    seed()
    client = browser(create_app())
    if login is not None:
        sign_in(client, forge, login)
    token = csrf_of(client, "/jobs") if login is not None else None
    calls = walked()
    assert Call("POST", "/jobs/{job_id}/stop") in calls and Call("GET", "/jobs") in calls

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(segment, min_size=2, max_size=2), query, form)
    def walk(segments: list[str], params: list, fields: list) -> None:
        data = {name: value for name, value in fields if value != token}
        paths = [(call, _path(call.template, segments)) for call in calls]
        before = rows()
        for call, path in paths:
            answer = _send(client, call, path, params, data)
            assert answer.status_code < 500, (call, path, answer.text[:300])
        assert rows() == before
        if token is None:
            return
        for call, path in paths:
            if call.method == "POST" and call.template != "/signout":
                answer = _send(client, call, path, params, {**data, "csrf": token})
                assert answer.status_code < 500, (call, path, answer.text[:300])
                end_every_job()

    walk()


def _path(template: str, segments: list[str]) -> str:
    """The template with its parameters filled, in turn, by the segments, percent-encoded."""
    filled = iter(segments * 2)
    return PARAM.sub(lambda _: quote(next(filled), safe=""), template)
