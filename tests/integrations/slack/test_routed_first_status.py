"""A mention in a channel routed to a repository names that repository in its first status, as
the README promises: the route is read at intake, not first by the worker."""

from __future__ import annotations

from typing import Any

from resolver.store.db import session_scope
from resolver.store.repo_defaults import set_route
from tests.integrations.deliveries import load, post, slack

ALICE = "T061EG9R6:W021FGA1Z"
BOT_USER = "U0LAN0Z89"


def test_a_routed_channels_mention_names_its_repository_in_the_first_status(
    webhook_client: Any, store: Any
) -> None:
    store.link("slack", ALICE)
    with session_scope() as session:
        set_route(session, "slack", "C0LAN2Q65", "github", "acme/web")
    payload = load("slack", "app_mention__in_channel")
    payload["event"]["text"] = f"<@{BOT_USER}> fix the login bug"

    response = post(webhook_client, slack(payload))

    assert response.status_code == 202
    [job] = store.jobs()
    assert job.repo == "github:acme/web"
    assert "**Queued** on `github:acme/web`" in store.status_text(job.id)


def test_an_unrouted_channels_mention_names_none(webhook_client: Any, store: Any) -> None:
    store.link("slack", ALICE)
    payload = load("slack", "app_mention__in_channel")
    payload["event"]["text"] = f"<@{BOT_USER}> fix the login bug"
    assert post(webhook_client, slack(payload)).status_code == 202
    [job] = store.jobs()
    assert job.repo is None
