"""`resolver backup` and `resolver restore`: the database and a manifest in one file."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from resolver.core import version
from resolver.core.settings import get_settings
from resolver.store import backup as store_backup

console = Console()


def fail(message: str) -> None:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def backup(path: Path) -> None:
    """Write the database and a manifest (schema, a fingerprint of the vault keys, never the
    keys) to one file, PATH, replaced only when complete. Keep RESOLVER_SECRET_KEYS safe
    apart: without them the tokens are lost."""
    settings = get_settings()
    try:
        manifest = store_backup.write(
            settings.database_url, path, settings.fernet_keys, version.current()
        )
    except (store_backup.BackupError, OSError) as error:
        fail(str(error))
    console.print(
        f"wrote {path} ({manifest.backend}, schema {manifest.schema}, "
        f"keys {', '.join(manifest.keys)})"
    )


def restore(
    path: Path,
    replace: bool = typer.Option(
        False, "--replace", help="Overwrite a database that already has tables."
    ),
) -> None:
    """Restore PATH, a file `resolver backup` wrote, into this deployment's database, after
    checking that its vault keys are among RESOLVER_SECRET_KEYS; then every stored secret is
    decrypted as a check."""
    settings = get_settings()
    try:
        manifest = store_backup.restore(
            settings.database_url, path, settings.fernet_keys, replace=replace
        )
        opened = store_backup.decryptable(settings.database_url, settings.fernet_keys)
    except (store_backup.BackupError, OSError) as error:
        fail(str(error))
    console.print(
        f"restored {path} (resolver {manifest.resolver}, schema {manifest.schema}); "
        f"{opened} stored secret(s) decrypt with the configured keys. "
        "Run `resolver db upgrade` if this release is newer."
    )
