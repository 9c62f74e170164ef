"""GitHub: intake knows whether a push to the default branch or a red check can concern the bot,
without a call to GitHub: from the bot's own pull requests, kept from `pull_request` events, and
the repository's options as a job last read them. What cannot concern it is 204 with nothing
recorded, counted in /metrics by reason."""

from __future__ import annotations

import copy
import re
from typing import Any

from sqlalchemy import select

from resolver.store import bot_pulls
from resolver.store.db import session_scope
from resolver.store.models import BotPull, RepoOptions
from tests.integrations.deliveries import github, load, post
from tests.integrations.github.test_red_ci import branch_job, red

REPO = "Codertocat/Hello-World"
BRANCH = "resolver/7-fix-export"


def pushed(*paths: str, ref: str = "refs/heads/master") -> dict[str, Any]:
    """A push to `ref` (the default branch) whose one commit changed `paths`."""
    payload = copy.deepcopy(load("github", "push__branch"))
    payload.update(ref=ref, deleted=False, after="a" * 40)
    payload["commits"] = [{"id": "a" * 40, "added": [], "modified": list(paths), "removed": []}]
    return payload


def pull_event(action: str, *, author: str = "resolver[bot]", head: str = BRANCH) -> Any:
    payload = copy.deepcopy(load("github", "pull_request.opened__plain"))
    payload["action"] = action
    payload["pull_request"]["user"].update(login=author, type="Bot")
    payload["pull_request"]["head"]["ref"] = head
    return github(f"pull_request.{action}", payload)


def options(*, conflicts: bool | None = None, ci: bool | None = None) -> None:
    """The repository's options as a job read them."""
    with session_scope() as session:
        if conflicts is not None:
            bot_pulls.remember_option(session, "github", REPO, "b" * 40, "conflicts", conflicts)
        if ci is not None:
            bot_pulls.remember_option(session, "github", REPO, "b" * 40, "ci", ci)


def recorded_pulls() -> list[tuple[int, str, str]]:
    """The bot's pull requests recorded as open."""
    with session_scope() as session:
        query = select(BotPull.number, BotPull.head, BotPull.base).where(~BotPull.closed)
        rows = session.execute(query).all()
    return [tuple(row) for row in rows]


def ignored_count(client: Any, reason: str) -> float:
    page = client.get("/metrics").text
    pattern = rf'resolver_ignored_events_total{{provider="github",reason="{reason}"}} (\S+)'
    found = re.search(pattern, page)
    return float(found.group(1)) if found else 0.0


def test_a_push_into_a_base_without_a_bot_pull_is_204_with_nothing_recorded(
    webhook_client: Any, store: Any
) -> None:
    first = branch_job(store)  # the bot has a branch in the repository, but no pull into master
    options(conflicts=True)
    before = ignored_count(webhook_client, "no bot pull request into the base")

    response = post(webhook_client, github("push", pushed("README.md")))

    assert response.status_code == 204
    assert [job.id for job in store.jobs()] == [first] and store.deliveries() == []
    after = ignored_count(webhook_client, "no bot pull request into the base")
    assert after == before + 1


def test_a_push_where_conflicts_fix_is_off_is_204(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    options(conflicts=False)
    assert post(webhook_client, pull_event("opened")).status_code == 204
    assert post(webhook_client, github("push", pushed("README.md"))).status_code == 204
    assert len(store.jobs()) == 1 and store.deliveries() == []


def test_the_bots_pull_requests_are_kept_from_their_events(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    options(conflicts=True)

    assert post(webhook_client, pull_event("opened")).status_code == 204
    assert recorded_pulls() == [(2, BRANCH, "master")]
    assert post(webhook_client, github("push", pushed("README.md"))).status_code == 202

    assert post(webhook_client, pull_event("closed")).status_code == 204
    assert recorded_pulls() == []
    assert post(webhook_client, github("push", pushed("src/a.py"))).status_code == 204
    assert len(store.jobs()) == 2


def test_other_peoples_pull_requests_are_not_kept(webhook_client: Any, store: Any) -> None:
    assert post(webhook_client, pull_event("opened", author="Codertocat")).status_code == 204
    assert post(webhook_client, pull_event("opened", head="feature/x")).status_code == 204
    assert recorded_pulls() == []


def test_a_pull_number_no_forge_gives_is_malformed(webhook_client: Any, store: Any) -> None:
    for number in (2**70, 2**31, 0):
        payload = copy.deepcopy(load("github", "pull_request.opened__plain"))
        payload["pull_request"]["user"].update(login="resolver[bot]", type="Bot")
        payload["pull_request"]["head"]["ref"] = BRANCH
        payload["pull_request"]["number"] = number
        delivery = github("pull_request.opened", payload)
        assert post(webhook_client, delivery).status_code == 400, number
    assert recorded_pulls() == []


def test_an_unknown_repository_runs_one_job_and_later_pushes_wait_for_it(
    webhook_client: Any, store: Any
) -> None:
    branch_job(store)
    assert post(webhook_client, github("push", pushed("README.md"))).status_code == 202
    assert post(webhook_client, github("push", pushed("src/a.py"))).status_code == 204
    assert len(store.jobs()) == 2


def test_a_push_that_changes_the_config_is_read_again(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    options(conflicts=False)
    response = post(webhook_client, github("push", pushed(".resolver/config.yml")))
    assert response.status_code == 202
    with session_scope() as session:
        row = session.scalars(select(RepoOptions)).one()
    assert row.conflicts_fix is None and row.conflicts_asked_at is not None


def test_a_red_check_where_ci_fix_is_off_is_204(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    options(ci=False)
    assert post(webhook_client, github("check_run.completed", red())).status_code == 204
    assert len(store.jobs()) == 1 and store.deliveries() == []
    options(ci=True)
    assert post(webhook_client, github("check_run.completed", red())).status_code == 202
