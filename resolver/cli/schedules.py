"""`resolver schedules …`: recurring agent runs on a repository (scheduled maintenance)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from resolver.cli.transaction import in_transaction
from resolver.schedules import asked, queue
from resolver.schedules.cron import CronError, next_due, zone
from resolver.schedules.history import RunRow, history, waiting_counts
from resolver.schedules.spec import (
    LIMIT_KEYS,
    TASKS,
    ScheduleError,
    ScheduleSpec,
    build_spec,
    parse_limits,
)
from resolver.schedules.store import (
    FILE,
    add_schedule,
    all_schedules,
    find_schedule,
    remove_schedule,
    repository,
)
from resolver.store import accounts
from resolver.store.models import utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

console = Console()
app = typer.Typer(
    help="Recurring agent runs on a repository: update dependencies, fix the default branch, "
    "or any prompt, on a cron schedule.",
    no_args_is_help=True,
)
REPO_HELP = "owner/name on the first installed forge, or forge:owner/name (forge:group/project)."


def fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def local(instant: datetime | None, timezone: str) -> str:
    if instant is None:
        return "-"
    return instant.astimezone(zone(timezone)).strftime("%Y-%m-%d %H:%M %Z")


@app.command("add")
def add(
    name: str = typer.Argument(..., help="Lower-case letters, digits, `.`, `_`, `-`."),
    repo: str = typer.Option(..., help=REPO_HELP),
    cron: str = typer.Option(..., help="Five cron fields, read on the timezone's clock."),
    timezone: str = typer.Option("UTC", help="IANA timezone, such as Europe/Berlin."),
    task: str = typer.Option("custom", help=f"One of {', '.join(TASKS)}."),
    prompt: str | None = typer.Option(None, help="What to do (custom), or extra instructions."),
    test_command: str | None = typer.Option(None, help="fix-default-branch: the tests to run."),
    dry_run: bool = typer.Option(False, help="Run the agent and record its diff; push nothing."),
    max_iterations: int | None = typer.Option(None, help="Agent steps per run."),
    max_cost_usd: float | None = typer.Option(None, help="Spend limit per run, USD."),
    user: str | None = typer.Option(None, help="The Resolver user whose token runs use."),
    installation_id: int | None = typer.Option(
        None, help="The forge app's installation id, on a forge that installs apps."
    ),
) -> None:
    """Add a schedule to a repository."""
    values = {
        "name": name,
        "cron": cron,
        "timezone": timezone,
        "task": task,
        "prompt": prompt,
        "test_command": test_command,
        "dry_run": dry_run,
        "max_iterations": max_iterations,
        "max_cost_usd": max_cost_usd,
    }
    try:
        spec = build_spec(values)
        where = in_transaction(_add, repo, installation_id, user, spec)
    except (ScheduleError, accounts.AccountError) as error:
        fail(str(error))
    first = next_due(spec.cron, spec.timezone, utcnow())
    console.print(f"added {name} on {where}; first run {local(first, spec.timezone)}")


def _add(
    session: Session, repo: str, installation_id: int | None, user: str | None, spec: ScheduleSpec
) -> str:
    user_id = accounts.get_user(session, user).id if user else None
    row = repository(session, repo, installation_id=installation_id, user_id=user_id)
    add_schedule(session, row, spec)
    return row.repo


@app.command("list")
def list_schedules(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List schedules: when they run next, their pull request, runs waiting for a limit."""
    rows = in_transaction(_listed, utcnow())
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(*rows[0].keys()) if rows else Table("name", "repo")
    for row in rows:
        table.add_row(*(str(value) for value in row.values()))
    console.print(table)


def _listed(session: Session, now: datetime) -> list[dict[str, Any]]:
    rows = []
    waiting = waiting_counts(session)
    for s in all_schedules(session):
        try:
            upcoming = local(next_due(s.cron, s.timezone, now), s.timezone) if s.enabled else "-"
        except CronError:
            upcoming = "invalid cron"
        rows.append(
            {
                "name": s.name,
                "repo": s.repository.repo,
                "task": s.task,
                "when": f"{s.cron} ({s.timezone})",
                "next": upcoming,
                "pull_request": f"{s.pull_state} {s.pull_branch}" if s.pull_state else "-",
                "waiting": waiting.get(s.id, 0),
                "notes": _notes(s.origin, s.enabled, s.dry_run, s.repository.sync_error),
            }
        )
    return rows


def _notes(origin: str, enabled: bool, dry_run: bool, sync_error: str | None) -> str:
    notes = []
    if origin == FILE:
        notes.append("from schedules.yml")
    if not enabled:
        notes.append("disabled")
    if dry_run:
        notes.append("dry run")
    if sync_error:
        notes.append(f"file unreadable: {sync_error[:80]}")
    return ", ".join(notes) or "-"


@app.command("remove")
def remove(
    name: str, repo: str | None = typer.Option(None, help=f"Needed if ambiguous: {REPO_HELP}")
) -> None:
    """Delete a schedule and its history."""
    try:
        in_transaction(_remove, name, repo)
    except ScheduleError as error:
        fail(str(error))
    console.print(f"removed {name}")


def _remove(session: Session, name: str, repo: str | None) -> None:
    remove_schedule(session, find_schedule(session, name, repo))


@app.command("run-now")
def run_now(
    name: str, repo: str | None = typer.Option(None, help=f"Needed if ambiguous: {REPO_HELP}")
) -> None:
    """Run a schedule now (a limit that is full makes the run wait, and says so)."""
    from resolver.core.settings import get_settings

    try:
        requested = asked.run_now(name, repo, queue.MANUAL, "cli", get_settings())
    except ScheduleError as error:
        fail(str(error))
    if requested.job_id is None:
        why = requested.waiting_for or "the next tick of the scheduler"
        console.print(f"run {requested.run_id} of {name} is waiting for {why}")
    else:
        console.print(f"run {requested.run_id} of {name} started as job {requested.job_id}")


@app.command("history")
def show_history(
    name: str,
    repo: str | None = typer.Option(None, help=f"Needed if ambiguous: {REPO_HELP}"),
    limit: int = typer.Option(20, help="Newest N runs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Each run of a schedule: when it was due, when it ran, what it did, its PR and cost."""
    try:
        timezone, runs = in_transaction(_history, name, repo, limit)
    except ScheduleError as error:
        fail(str(error))
    if as_json:
        rows = [
            {**run.__dict__, "due_at": run.due_at.isoformat(), "started_at": _iso(run.started_at)}
            for run in runs
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("run", "due", "reason", "ran", "job", "what it did", "pull request", "cost")
    for run in runs:
        reason = f"{run.reason} ({run.requested_by})" if run.requested_by else run.reason
        cost = "-" if run.cost_usd is None else f"${run.cost_usd:.2f}"
        table.add_row(
            str(run.id),
            local(run.due_at, timezone),
            reason,
            local(run.started_at, timezone),
            str(run.job_id or "-"),
            run.did,
            run.pr_url or "-",
            cost,
        )
    console.print(table)


def _history(session: Session, name: str, repo: str | None, limit: int) -> tuple[str, list[RunRow]]:
    schedule = find_schedule(session, name, repo)
    return schedule.timezone, history(session, schedule, limit)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


@app.command("sync")
def sync(
    repo: str = typer.Argument(..., help=REPO_HELP),
    user: str | None = typer.Option(None, help="The Resolver user whose token runs use."),
    installation_id: int | None = typer.Option(
        None, help="The forge app's installation id, on a forge that installs apps."
    ),
) -> None:
    """Follow the repository's .resolver/schedules.yml: read it now, and again every 15 min."""
    from resolver.core.settings import get_settings
    from resolver.schedules.sync import sync_repo

    try:
        repo_id = in_transaction(_follow, repo, installation_id, user)
    except (ScheduleError, accounts.AccountError) as error:
        fail(str(error))
    settings = get_settings()
    changes = sync_repo(repo_id, settings.sandbox_workspace_root, settings)
    in_transaction(_check_synced, repo)
    console.print(f"{repo}: " + ("; ".join(changes) or "up to date"))


def _follow(session: Session, repo: str, installation_id: int | None, user: str | None) -> int:
    user_id = accounts.get_user(session, user).id if user else None
    row = repository(session, repo, installation_id=installation_id, user_id=user_id)
    row.follow_file = True
    return row.id


def _check_synced(session: Session, repo: str) -> None:
    row = repository(session, repo)
    if row.sync_error:
        fail(f"could not read the schedules file: {row.sync_error}")


@app.command("limits")
def set_limits(
    repo: str = typer.Argument(..., help=REPO_HELP),
    runs_per_hour: int | None = typer.Option(None, help="Runs started per hour."),
    concurrent_runs: int | None = typer.Option(None, help="Runs at once."),
    open_prs: int | None = typer.Option(None, help="Open pull requests of its schedules."),
) -> None:
    """Set a repository's run limits (its schedules.yml may only tighten them)."""
    given = {
        "runs_per_hour": runs_per_hour,
        "concurrent_runs": concurrent_runs,
        "open_prs": open_prs,
    }
    try:
        values = parse_limits({k: v for k, v in given.items() if v is not None})
        shown = in_transaction(_set_limits, repo, values)
    except ScheduleError as error:
        fail(str(error))
    console.print(f"{repo}: " + ", ".join(f"{k}={v or 'default'}" for k, v in shown.items()))


def _set_limits(session: Session, repo: str, values: dict[str, int]) -> dict[str, Any]:
    row = repository(session, repo)
    for key, value in values.items():
        setattr(row, key, value)
    return {key: getattr(row, key) for key in LIMIT_KEYS}
