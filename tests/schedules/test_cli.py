"""`resolver schedules …` as an operator uses it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from resolver.cli import app
from tests.conftest import ResolverEnv

runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, ["schedules", *args])
    return done.exit_code, done.output


def test_add_list_run_now_history_limits_remove(resolver_env: ResolverEnv) -> None:
    code, out = cli(
        "add", "weekly", "--repo", "octo/widgets", "--cron", "0 6 * * 1",
        "--timezone", "Europe/Berlin", "--prompt", "Tidy up.", "--max-cost-usd", "2",
    )  # fmt: skip
    assert code == 0, out
    assert "added weekly on github:octo/widgets; first run" in out and "CE" in out
    code, out = cli("add", "weekly", "--repo", "octo/widgets", "--cron", "@daily", "--prompt", "x")
    assert code == 1 and "already has a schedule named 'weekly'" in out
    code, out = cli("add", "bad", "--repo", "octo/widgets", "--cron", "0 6 * *", "--prompt", "x")
    assert code == 1 and "five fields" in out

    code, out = cli("list", "--json")
    [listed] = json.loads(out)
    assert (listed["name"], listed["when"], listed["waiting"]) == (
        "weekly",
        "0 6 * * 1 (Europe/Berlin)",
        0,
    )

    code, out = cli("run-now", "weekly")
    assert code == 0 and "started as job" in out, out
    code, out = cli("run-now", "weekly")
    assert "waiting for the repository's limit of 1 run at once" in out
    code, out = cli("history", "weekly", "--json")
    runs = json.loads(out)
    assert [run["did"] for run in runs] == [
        "waiting for the repository's limit of 1 run at once",
        "queued",
    ]
    assert [run["reason"] for run in runs] == ["manual", "manual"]

    code, out = cli("limits", "octo/widgets", "--concurrent-runs", "3")
    assert code == 0 and "concurrent_runs=3" in out
    code, out = cli("limits", "octo/widgets", "--open-prs", "0")
    assert code == 1 and "at least 1" in out

    assert cli("remove", "weekly") == (0, "removed weekly\n")
    code, out = cli("history", "weekly")
    assert code == 1 and "no schedule named 'weekly'" in out
