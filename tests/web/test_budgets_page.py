"""The admin page's Budgets section: the same lines as `resolver budgets`."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from resolver.core.settings import get_settings
from resolver.onboarding import operator
from tests.agent.test_budgets import spent_earlier
from tests.web.conftest import browser


def test_the_admin_page_shows_spend_against_each_cap(
    app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser(app)
    client.get(urlsplit(operator.operator_url(get_settings())).path)
    assert "No budgets are set" in client.get("/admin").text
    monkeypatch.setenv("RESOLVER_BUDGET_REPO_DAILY_USD", "2")
    get_settings.cache_clear()
    spent_earlier(2.5)
    page = client.get("/admin")
    assert page.status_code == 200
    assert (
        '<tr class="stale"><td>repository&#39;s daily budget</td><td>acme/app</td>'
        "<td>$2.50</td><td>$2.00</td>" in page.text
    )
