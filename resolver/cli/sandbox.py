"""`resolver sandbox …` commands (owned by the sandbox work).

Each command imports `sandbox` (and with it docker) when it runs: every `resolver` process loads
this module, `resolver serve`, the web process, included.
"""

from __future__ import annotations

import shlex
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from resolver.core.settings import get_settings

if TYPE_CHECKING:
    import sandbox

app = typer.Typer(help="Build, run, list and reap sandbox containers.", no_args_is_help=True)
console = Console(highlight=False)
errors = Console(stderr=True, highlight=False, style="red")
T = TypeVar("T")


@app.command()
def build(
    offline: Annotated[
        bool, typer.Option("--offline", help="Base the image on debootstrap, not on a registry.")
    ] = False,
) -> None:
    """Build the sandbox image and the egress proxy's unless their hash-of-inputs tags exist."""
    import sandbox

    started = time.monotonic()
    tag = _or_exit(lambda: sandbox.ensure_image(offline=offline, progress=console.print))
    proxy = _or_exit(lambda: sandbox.ensure_proxy_image(offline=offline, progress=console.print))
    console.print(f"{tag} and {proxy} ready in {time.monotonic() - started:.0f}s")


class NetworkChoice(StrEnum):
    none = "none"
    bridge = "bridge"


@app.command()
def run(
    command: Annotated[list[str], typer.Argument(help="The command; one argument is shell text.")],
    network: Annotated[
        NetworkChoice, typer.Option(help="The sandbox's network.")
    ] = NetworkChoice.none,
    workspace: Annotated[
        Path | None,
        typer.Option(help="Host directory copied into /workspace; the copy goes with the sandbox."),
    ] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds; default from settings.")] = None,
) -> None:
    """Run one command in a fresh sandbox, print its output and exit with its code."""
    import sandbox
    from resolver.agent.sandboxes import policy_from_settings

    policy = replace(policy_from_settings(get_settings()), network=network.value)
    text = command[0] if len(command) == 1 else shlex.join(command)
    with _or_exit(lambda: sandbox.open_sandbox("cli", policy)) as box:
        if workspace is not None:
            _or_exit(lambda: _copy_in(box, workspace, policy.user))
        result = _or_exit(lambda: box.run(text, timeout=timeout))
    typer.echo(result.output, nl=False)
    for flag in ("timed_out", "oom_killed", "cancelled"):
        if getattr(result, flag):
            errors.print(f"sandbox: {flag.replace('_', ' ')}")
    raise typer.Exit(result.exit_code)


def _copy_in(box: sandbox.Sandbox, directory: Path, uid: int) -> None:
    """The directory's contents, owned by the sandbox user (symlinks are copied as links)."""

    def owned(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.uid = member.gid = uid
        return member

    with tempfile.TemporaryFile() as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            tar.add(directory, arcname=".", filter=owned)
        archive.seek(0)
        box.load(archive)


@app.command()
def ps() -> None:
    """List this deployment's sandbox containers: job, state, age and workspace."""
    import sandbox

    now = datetime.now(UTC)
    deployment = get_settings().deployment
    table = Table("container", "name", "job", "state", "age", "workspace")
    for info in _or_exit(lambda: sandbox.list_sandboxes(deployment)):
        table.add_row(
            info.container_id[:12],
            info.name,
            info.job_id or "(warm)",
            info.state,
            f"{info.age(now):.0f}s",
            str(info.workspace or "-"),
        )
    console.print(table)


@app.command()
def reap() -> None:
    """Remove this deployment's sandboxes whose job ended or moved on, or that are too old."""
    import sandbox
    from resolver.store.jobs import sandbox_is_stale

    settings = get_settings()
    max_age = float(settings.sandbox_max_age)
    removed = _or_exit(lambda: sandbox.reap(sandbox_is_stale, max_age, settings.deployment))
    for container_id in removed:
        console.print(f"removed {container_id[:12]}")
    console.print(f"{len(removed)} sandbox(es) removed")


def _or_exit(action: Callable[[], T]) -> T:
    import sandbox

    try:
        return action()
    except sandbox.SandboxError as error:
        errors.print(f"sandbox error: {error}")
        raise typer.Exit(3) from None
