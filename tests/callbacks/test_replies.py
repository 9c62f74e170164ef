"""The status message, commands and repository routes: pure rules and the routes CLI."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from integrations.registry import parse_repo_spec
from resolver.callbacks.status import JobView, pull_body, render
from resolver.contract.commands import parse_command
from resolver.contract.errors import RouteError
from resolver.contract.outbound import has_hidden_tag, hidden_tag, with_hidden_tag
from tests.cli.test_cli_api import cli

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
        "job_url": "https://resolver.example/jobs/12",
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
        ("rebase", "rebase"),
        ("rebase please", "rebase"),
        ("rebase onto the release branch", None),
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
    for bad in ("widgets", "nowhere:a/b", "gitlab:/app", "octo/"):
        with pytest.raises(RouteError):
            parse_repo_spec(bad)


def test_the_status_follows_the_job_from_setup_to_the_pull_request() -> None:
    setting_up = render(view())
    assert "Setting up" in setting_up and "`octo/widgets`" in setting_up
    assert "1m 23s" in setting_up and "$0.00" in setting_up
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
    )
    assert done.startswith("✅ **Done** on `octo/widgets`. Opened the draft pull request https://")
    assert "$0.12" in done and "Fixed add()." in done


def test_a_hidden_tag_names_exactly_one_message() -> None:
    text = with_hidden_tag("**Done**", "status-12")
    assert text == "**Done**\n<!-- resolver:status-12 -->"
    assert has_hidden_tag(text) and has_hidden_tag(text, "status-12")
    assert not any(has_hidden_tag(text, t) for t in ("status-1", "status-120", "notice-12"))
    assert with_hidden_tag("plain", None) == "plain" and not has_hidden_tag("plain")
    for bad in ("status", "Status-1", "status-1 -->", "status-1\n"):
        with pytest.raises(ValueError, match="not a message tag"):
            hidden_tag(bad)


def test_failures_say_what_to_do_and_questions_back_do_not_offer_a_retry() -> None:
    failed = render(view(state="failed", outcome="error", error="git push failed: denied"))
    assert "❌ **Failed.**" in failed and "git push failed" in failed
    assert "**Run again** on [the job's page](https://resolver.example/jobs/12)" in failed
    asked = render(view(state="failed", outcome="could_not", error="Which repository?"))
    assert "Which repository?" in asked and "retry" not in asked
    refused = render(view(state="failed", outcome="refused", error="Sorry @dave, no."))
    assert "**Not started.** Sorry @dave, no." in refused
    assert "Cancelled" in render(view(state="cancelled", outcome="cancelled"))


def test_the_pull_request_body_links_the_issue_the_job_and_the_cost() -> None:
    body = pull_body(view(summary="Fixed add().", cost_usd=0.5), "Fix add", 7)
    assert body.splitlines()[0] == "Fixed add()."
    assert "Fixes #7" in body and "(https://resolver.example/jobs/12)" in body
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


def test_every_end_the_watchdog_makes_is_worded() -> None:
    expired = render(view(state="failed", outcome="expired", error="waited more than 6 hours"))
    assert expired.startswith("⌛ **Expired.**") and "6 hours" in expired
    no_pull = render(
        view(
            state="succeeded",
            outcome="changed_code",
            branch="resolver/7-fix",
            pull_error="HTTP 422: a pull request needs a base branch",
        )
    )
    assert "Pushed `resolver/7-fix`, but the draft pull request could not be opened" in no_pull
    assert "HTTP 422" in no_pull
    noted = render(
        view(state="succeeded", outcome="answered", summary="It adds.", notes=("One stray",))
    )
    assert noted.endswith("It adds.\n\n- One stray")
