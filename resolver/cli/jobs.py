"""`resolver jobs …`: inspect, retry and cancel jobs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from resolver.cli.transaction import in_transaction
from resolver.core.states import IllegalTransitionError
from resolver.store import jobs as job_store
from resolver.store.models import Job

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

app = typer.Typer(help="Inspect, retry and cancel jobs.", no_args_is_help=True)
console = Console()


def _load(session: Session, job_id: int) -> Job:
    try:
        return job_store.get_job(session, job_id)
    except job_store.JobNotFoundError:
        console.print(f"[red]error:[/red] no job {job_id}")
        raise typer.Exit(1) from None


@app.command("list")
def list_jobs(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
    limit: int = typer.Option(50, help="Most recent N jobs."),
) -> None:
    """List recent jobs."""
    rows = in_transaction(_recent, limit)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("id", "state", "outcome", "source", "repo", "requester", "cost", "pr")
    for row in rows:
        cost = "-" if row["cost_usd"] is None else f"${row['cost_usd']:.2f}"
        table.add_row(
            str(row["id"]),
            row["state"],
            row["outcome"] or "-",
            row["source"],
            row["repo"] or "-",
            row["requester"] or "-",
            cost,
            row["pr_url"] or "-",
        )
    console.print(table)


def _recent(session: Session, limit: int) -> list[dict[str, Any]]:
    return [job_store.job_to_dict(j) for j in job_store.recent_jobs(session, limit)]


@app.command("show")
def show(
    job_id: int,
    as_json: bool = typer.Option(False, "--json", help="Print JSON with the trajectory."),
) -> None:
    """Show one job and its trajectory."""
    data = in_transaction(_shown, job_id)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    for key, value in data.items():
        if key != "trajectory":
            console.print(f"[bold]{key}[/bold]: {value}")
    for event in data["trajectory"]:
        console.print(f"  #{event['seq']} {event['kind']}: {json.dumps(event)[:300]}")


def _shown(session: Session, job_id: int) -> dict[str, Any]:
    job = _load(session, job_id)
    return job_store.job_to_dict(job, job.events)


@app.command("retry")
def retry(job_id: int) -> None:
    """Queue a failed or cancelled job again."""
    from resolver.broker.outbox import publish_job

    try:
        in_transaction(_retry, job_id)
    except IllegalTransitionError as error:
        console.print(f"[red]error:[/red] {error}; only failed or cancelled jobs can be retried")
        raise typer.Exit(1) from None
    in_transaction(publish_job, job_id)
    console.print(f"job {job_id} queued again")


def _retry(session: Session, job_id: int) -> None:
    job_store.retry_job(session, _load(session, job_id))


@app.command("cancel")
def cancel(job_id: int) -> None:
    """Cancel a queued job, or stop a running one."""
    state = in_transaction(_cancel, job_id)
    console.print(f"job {job_id}: {'cancel requested' if state == 'running' else state}")


def _cancel(session: Session, job_id: int) -> str:
    job = _load(session, job_id)
    job_store.request_cancel(session, job)
    return job.state
