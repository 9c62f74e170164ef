"""`resolver budgets`: the spend against each cap, as an operator reads it."""

from __future__ import annotations

from tests.agent.test_budgets import spent_earlier
from tests.cli.test_cli_api import cli
from tests.conftest import ResolverEnv


def test_budgets_shows_spend_against_each_cap(resolver_env: ResolverEnv) -> None:
    env = resolver_env.child_env()
    none = cli(env, "budgets")
    assert none.returncode == 0 and "No budgets are set" in none.stdout
    spent_earlier(1.5, requester="ada")
    spent_earlier(0.25, requester="bob")
    capped = resolver_env.child_env(
        RESOLVER_BUDGET_REQUESTER_DAILY_USD="2",
        RESOLVER_BUDGET_SERVICE_MONTHLY_USD="100",
        COLUMNS="200",
    )
    shown = cli(capped, "budgets")
    assert shown.returncode == 0, shown.stderr
    lines = [" ".join(line.replace("│", " ").split()) for line in shown.stdout.splitlines()]
    assert any("requester's daily budget ada $1.50 $2.00 75%" in line for line in lines), lines
    assert any("requester's daily budget bob $0.25 $2.00 12%" in line for line in lines), lines
    assert any("service's monthly budget service $1.75 $100.00 2%" in line for line in lines)
