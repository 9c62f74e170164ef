"""The operator's link: an admin session before any sign-in exists, for `/setup`."""

from __future__ import annotations

from urllib.parse import urlsplit

from resolver.core.settings import get_settings
from resolver.onboarding import operator
from tests.web.conftest import browser


def _path(url: str) -> str:
    return urlsplit(url).path


def test_the_operator_link_opens_an_admin_session(app) -> None:
    client = browser(app)
    assert client.get("/admin").status_code == 303  # signed out: to sign-in
    opened = client.get(_path(operator.operator_url(get_settings())))
    assert opened.status_code == 303 and opened.headers["location"] == "/setup"
    admin = client.get("/admin")
    assert admin.status_code == 200 and "operator" in admin.text


def test_a_forged_or_expired_operator_link_is_refused(app, monkeypatch) -> None:
    client = browser(app)
    url = operator.operator_url(get_settings())
    forged = client.get(_path(url)[:-3] + "abc")
    assert forged.status_code == 403 and "not a setup link" in forged.text
    monkeypatch.setattr(operator, "OPERATOR_LINK_SECONDS", -1)
    expired = client.get(_path(url))
    assert expired.status_code == 403 and "resolver setup url" in expired.text
    assert client.get("/admin").status_code == 303
