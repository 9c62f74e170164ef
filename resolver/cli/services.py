"""Long-running processes: serve, worker, beat, and database upgrades."""

from __future__ import annotations

import os

import typer

from integrations import registry
from resolver.broker.celery_app import QUEUES, get_celery
from resolver.core.logs import configure_logging
from resolver.core.settings import VAR_DIR, get_settings

db_app = typer.Typer(help="Database schema.", no_args_is_help=True)


def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="Port to listen on."),
    workers: int = typer.Option(1, help="Worker processes."),
) -> None:
    """Run the HTTP server (webhooks, health, metrics, the web app and its JSON API)."""
    import uvicorn

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    uvicorn.run(
        "resolver.app:serve_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        access_log=False,
    )


def worker(
    queues: str = typer.Option(",".join(QUEUES), help="Comma-separated queues to consume."),
    concurrency: int = typer.Option(2, help="Parallel tasks."),
    pool: str = typer.Option(
        "threads",
        help="threads: many I/O-bound jobs share one process (and its imports); prefork: a "
        "process per task.",
    ),
    hostname: str = typer.Option("", help="Celery node name."),
    metrics_port: int = typer.Option(
        0, help="Serve this worker's Prometheus metrics on this port (0: off)."
    ),
    nice: int = typer.Option(
        0,
        min=0,
        max=19,
        help="Lower this worker's CPU priority by this much (its threads and the git it runs "
        "inherit it), so that a burst of job starts leaves the CPU to the 👀 of other mentions.",
    ),
) -> None:
    """Run a Celery worker."""
    if nice:
        # Before any thread starts: Linux keeps a priority per thread, and new ones inherit it.
        os.nice(nice)
    if metrics_port:
        _serve_worker_metrics(metrics_port)
    if "callbacks" in queues.split(","):
        # Each provider's client now, not during the first 👀 after a start.
        registry.warm()
    if "jobs" in queues.split(","):
        _reap_own_engine()
        # What runs a job, loaded now rather than by the first job (the tasks module leaves it
        # out, for the callbacks worker's sake).
        import resolver.runners  # noqa: F401

        if pool in ("threads", "solo"):
            # Jobs run in this process, which keeps their warm sandboxes; a prefork child
            # would inherit the pool without its thread, so it starts each job cold instead.
            _warm_sandboxes()
    args = ["worker", "-Q", queues, "-c", str(concurrency), "-P", pool]
    args += ["--without-mingle", "--without-gossip"]
    if hostname:
        args += ["-n", hostname]
    get_celery().worker_main(args)


def _serve_worker_metrics(port: int) -> None:
    """`/metrics` of this worker process, with its engine's sandboxes counted at each scrape."""
    from prometheus_client import start_http_server

    from resolver.core import metrics
    from sandbox import list_sandboxes

    deployment = get_settings().deployment
    metrics.SANDBOXES_RUNNING.set_function(lambda: len(list_sandboxes(deployment)))
    start_http_server(port, addr="0.0.0.0")  # noqa: S104 - scraped from outside the host


def _reap_own_engine() -> None:
    """A worker that runs jobs sweeps the engine its sandboxes run on: with one engine per host,
    each host's orphans go, whichever worker beat's own sweep reaches."""
    from resolver.core import metrics
    from resolver.store.jobs import sandbox_is_stale
    from sandbox import PeriodicReaper

    settings = get_settings()
    PeriodicReaper(
        sandbox_is_stale,
        settings.sandbox_max_age,
        settings.sandbox_reap_interval,
        settings.deployment,
        on_swept=lambda removed: metrics.REAPER_REMOVALS.inc(len(removed)),
    )


def _warm_sandboxes() -> None:
    """Start this process's warm pool: spare sandboxes, with network and without."""
    from resolver.agent.sandboxes import start_warm_pool

    start_warm_pool(get_settings())


def beat() -> None:
    """Run Celery beat (the reconciler, the sandbox reaper, schedules)."""
    VAR_DIR.mkdir(exist_ok=True)
    get_celery().start(["beat", "-s", str(VAR_DIR / "celerybeat-schedule"), "--pidfile="])


@db_app.command("upgrade")
def db_upgrade(
    force: bool = typer.Option(
        False, "--force", help="Upgrade even while workers of another release are alive."
    ),
) -> None:
    """Apply every database migration. Refuses while a worker of another release is alive:
    stop the workers first (CHANGELOG.md)."""
    from resolver.store.migrate import MigrationRefused, upgrade

    if not force:
        _refuse_while_other_workers()
    try:
        upgrade(get_settings().database_url)
    except MigrationRefused as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    typer.echo("database is up to date")


def _refuse_while_other_workers() -> None:
    from resolver.broker.versions import worker_versions
    from resolver.core import version

    try:
        found = worker_versions(get_settings().redis_url)
    except Exception:  # no broker: no worker can be alive on it
        return
    this = version.current()
    others = {name: said for name, said in found.items() if said != this}
    if others:
        named = ", ".join(
            f"{name} ({said or 'a release before 0.2.0'})" for name, said in sorted(others.items())
        )
        typer.echo(
            f"error: stop the workers first: {named} still run on this broker, and this is "
            f"{this}. Stop every worker and beat, upgrade, then start the new release "
            "(--force upgrades anyway).",
            err=True,
        )
        raise typer.Exit(1)
