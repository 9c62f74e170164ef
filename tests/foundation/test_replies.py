"""The status message, commands and repository routes: pure rules and the routes CLI."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from resolver.commands import parse_command
from resolver.repo_routes import RouteError, parse_repo_spec
from resolver.status import JobView, is_marked, job_marker, pull_body, render, unmarked
from tests.foundation.test_cli_api import cli

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def view(**changes: object) -> JobView:
    values: dict[str, object] = {
        "id": 12,
        "state": "running",
        "outcome": None,
        "repo": "octo/widgets",
        "steps": 0,
        "cost_usd": 0.0,
        "started_at": NOW - timedelta(seconds=83),
        "finished_at": None,
        "now": NOW,
        "job_url": "https://resolver.example/api/jobs/12",
    }
    values.update(changes)
    return JobView(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("stop", "stop"),
        ("Stop please!", "stop"),
        ("cancel", "stop"),
        ("status", "status"),
        ("stop using tabs in calc.py", None),
        ("what is the status of the build?", None),
        ("", None),
    ],
)
def test_only_a_bare_command_word_is_a_command(text: str, command: str | None) -> None:
    assert parse_command(text) == command


def test_repository_specs_name_their_forge() -> None:
    assert parse_repo_spec("octo/widgets") == ("github", "octo/widgets")
    assert parse_repo_spec("gitlab:grp/sub/app") == ("gitlab", "grp/sub/app")
    for bad in ("widgets", "bitbucket:a/b", "gitlab:/app", "octo/"):
        with pytest.raises(RouteError):
            parse_repo_spec(bad)


def test_the_status_follows_the_job_from_setup_to_the_pull_request() -> None:
    setting_up = render(view())
    assert "Setting up" in setting_up and "`octo/widgets`" in setting_up
    assert "1m 23s" in setting_up and "$0.00" in setting_up
    assert setting_up.endswith("\n<!-- resolver:status job=12 -->")
    assert "step 4" in render(view(steps=4))
    done = render(
        view(
            state="succeeded",
            outcome="changed_code",
            steps=6,
            finished_at=NOW,
            cost_usd=0.1234,
            summary="Fixed add().",
            branch="resolver/7-fix",
            pr_url="https://github.example/octo/widgets/pull/3",
        ),
        marker=False,
    )
    assert done.startswith("✅ **Done** on `octo/widgets`. Opened the draft pull request https://")
    assert "$0.12" in done and "Fixed add()." in done and not is_marked(done)


def test_a_status_marker_names_its_job_and_comes_off_for_markups_that_show_it() -> None:
    text = render(view(id=12))
    assert is_marked(text) and is_marked(text, 12)
    assert not is_marked(text, 1) and not is_marked(text, 120)
    assert job_marker(1) not in render(view(id=12)) and job_marker(12) not in render(view(id=1))
    assert unmarked(text) == render(view(id=12), marker=False)
    assert not is_marked("<!-- resolver:status -->") and unmarked("plain") == "plain"


def test_failures_say_what_to_do_and_questions_back_do_not_offer_a_retry() -> None:
    failed = render(view(state="failed", outcome="error", error="git push failed: denied"))
    assert "❌ **Failed.**" in failed and "git push failed" in failed
    assert "resolver jobs retry 12" in failed
    asked = render(view(state="failed", outcome="could_not", error="Which repository?"))
    assert "Which repository?" in asked and "retry" not in asked
    refused = render(view(state="failed", outcome="refused", error="Sorry @dave, no."))
    assert "**Not started.** Sorry @dave, no." in refused
    assert "Cancelled" in render(view(state="cancelled", outcome="cancelled"))


def test_the_pull_request_body_links_the_issue_the_job_and_the_cost() -> None:
    body = pull_body(view(summary="Fixed add().", cost_usd=0.5), "Fix add", 7)
    assert body.splitlines()[0] == "Fixed add()."
    assert "Fixes #7" in body and "(https://resolver.example/api/jobs/12)" in body
    assert "$0.50" in body
    assert "Fixes" not in pull_body(view(cost_usd=None), "Fix add", None)


def test_routes_are_set_listed_and_removed(resolver_env) -> None:
    env = resolver_env.child_env()
    done = cli(env, "routes", "set", "slack", "C0123", "octo/widgets")
    assert done.returncode == 0 and "github:octo/widgets" in done.stdout
    assert cli(env, "routes", "set", "jira", "PROJ", "gitlab:grp/app").returncode == 0
    listed = cli(env, "routes", "list").stdout
    assert "C0123" in listed and "gitlab:grp/app" in listed
    bad = cli(env, "routes", "set", "github", "x", "octo/widgets")
    assert bad.returncode == 1 and "routes are for slack, jira, linear" in bad.stdout
    assert cli(env, "routes", "remove", "slack", "C0123").returncode == 0
    assert "C0123" not in cli(env, "routes", "list").stdout
