"""One-file backups: the database (SQLite's online backup API, or pg_dump) beside a manifest
with the schema revision and a fingerprint of the vault keys, never the keys themselves.

A backup is a tar file holding `manifest.json` and `database.sqlite` or `database.pgdump`.
Restoring checks the manifest against the keys at hand before it touches anything: a database
whose tokens no configured key can open is refused, naming the missing key by its fingerprint.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import inspect, select
from sqlalchemy.engine import make_url

from resolver.store.db import engine_for
from resolver.store.migrate import schema_state
from resolver.store.models import Credential, StoredSetting
from resolver.store.vault import Vault, VaultError

FORMAT = 1
MANIFEST = "manifest.json"
SQLITE_MEMBER = "database.sqlite"
PG_MEMBER = "database.pgdump"


class BackupError(Exception):
    """A backup could not be written or restored; the message says why and what to do."""


@dataclass(frozen=True)
class Manifest:
    kind: str
    format: int
    resolver: str
    schema: str | None
    backend: str
    keys: list[str]
    created_at: str


def key_fingerprint(key: str) -> str:
    """A short, one-way name for a vault key: enough to tell keys apart, useless to decrypt."""
    digest = hashlib.sha256(b"resolver-vault-key-fingerprint:" + key.encode()).hexdigest()
    return digest[:16]


def _backend(url: str) -> str:
    if url.startswith("sqlite"):
        return "sqlite"
    if url.startswith("postgresql"):
        return "postgresql"
    raise BackupError(f"backups support SQLite and PostgreSQL, not {make_url(url).drivername}")


def _sqlite_path(url: str) -> Path:
    path = make_url(url).database
    if not path or path == ":memory:":
        raise BackupError("an in-memory SQLite database has nothing to back up")
    return Path(path)


def _pg_env(url: str) -> dict[str, str]:
    """libpq's variables for `url`: the password travels in the environment, not in argv."""
    parts = make_url(url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    for name, value in (
        ("PGHOST", parts.host),
        ("PGPORT", parts.port),
        ("PGUSER", parts.username),
        ("PGPASSWORD", parts.password),
        ("PGDATABASE", parts.database),
    ):
        if value is not None:
            env[name] = str(value)
    return env


def _run(command: list[str], url: str) -> None:
    try:
        done = subprocess.run(
            command, env=_pg_env(url), capture_output=True, text=True, check=False, timeout=3600
        )
    except FileNotFoundError:
        raise BackupError(
            f"{command[0]} is not installed; install the PostgreSQL client of the server's "
            "major version (Debian: postgresql-client)"
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise BackupError(f"{command[0]} failed: {last}")


def write(url: str, path: Path, keys: list[str], version: str) -> Manifest:
    """Write a backup of the database at `url` to `path` (replaced only once complete)."""
    backend = _backend(url)
    schema, _head, _has_jobs = schema_state(url)
    manifest = Manifest(
        kind="resolver-backup",
        format=FORMAT,
        resolver=version,
        schema=schema,
        backend=backend,
        keys=[key_fingerprint(k) for k in keys],
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".backup-") as scratch:
        dump = Path(scratch) / (SQLITE_MEMBER if backend == "sqlite" else PG_MEMBER)
        if backend == "sqlite":
            source = sqlite3.connect(_sqlite_path(url))
            target = sqlite3.connect(dump)
            try:
                with target:
                    source.backup(target)  # a consistent copy while writers go on
            finally:
                target.close()
                source.close()
        else:
            _run(["pg_dump", "--format=custom", "--no-owner", "--file", str(dump)], url)
        partial = Path(scratch) / "backup.tar"
        with tarfile.open(partial, "w") as tar:
            body = json.dumps(asdict(manifest), indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
            tar.add(dump, arcname=dump.name)
        os.chmod(partial, 0o600)
        os.replace(partial, path)
    return manifest


def read_manifest(path: Path) -> Manifest:
    try:
        with tarfile.open(path, "r") as tar:
            member = tar.extractfile(MANIFEST)
            if member is None:
                raise KeyError(MANIFEST)
            data = json.loads(member.read())
        manifest = Manifest(**data)
    except FileNotFoundError:
        raise BackupError(f"no backup at {path}") from None
    except (tarfile.TarError, KeyError, ValueError, TypeError):
        raise BackupError(f"{path} is not a Resolver backup (no readable manifest)") from None
    if manifest.kind != "resolver-backup" or manifest.format != FORMAT:
        raise BackupError(f"{path} is a backup of an unknown format ({manifest.format})")
    return manifest


def check_keys(manifest: Manifest, keys: list[str]) -> None:
    """Refuse unless every key the backup was taken with is configured here."""
    have = {key_fingerprint(k) for k in keys}
    missing = [f for f in manifest.keys if f not in have]
    if missing:
        raise BackupError(
            "the backup's vault key(s) "
            + ", ".join(missing)
            + " are not in RESOLVER_SECRET_KEYS (by fingerprint), so its stored tokens could not"
            " be decrypted; configure the keys that were in use when it was taken"
        )


def _has_tables(url: str) -> bool:
    with engine_for(url).connect() as conn:
        return bool(inspect(conn).get_table_names())


def restore(url: str, path: Path, keys: list[str], *, replace: bool = False) -> Manifest:
    """Restore the backup at `path` into the database at `url`, after checking its keys."""
    manifest = read_manifest(path)
    backend = _backend(url)
    if manifest.backend != backend:
        raise BackupError(
            f"the backup is of a {manifest.backend} database and this deployment uses {backend}"
        )
    check_keys(manifest, keys)
    if not replace and _has_tables(url):
        raise BackupError(
            "the database already has tables; restore into an empty one, or pass --replace "
            "to overwrite it (stop every web, worker and beat process first)"
        )
    with tempfile.TemporaryDirectory(prefix="resolver-restore-") as scratch:
        member = SQLITE_MEMBER if backend == "sqlite" else PG_MEMBER
        dump = Path(scratch) / member
        # Read as bytes into a path of our own naming: no name, link or mode from the archive
        # reaches the disk (tarfile's extraction filters need Python 3.11.4, Debian has 3.11.2).
        try:
            with tarfile.open(path, "r") as tar:
                found = tar.extractfile(member)
                if found is None:
                    raise BackupError(f"{member} in the backup is not a file")
                with found, dump.open("wb") as out:
                    shutil.copyfileobj(found, out)
        except (tarfile.TarError, KeyError) as error:
            raise BackupError(f"the backup has no readable {member}: {error}") from None
        engine_for(url).dispose()
        if backend == "sqlite":
            source = sqlite3.connect(dump)
            target = sqlite3.connect(_sqlite_path(url))
            try:
                with target:
                    source.backup(target)
            finally:
                target.close()
                source.close()
        else:
            database = make_url(url).database or ""
            restore_args = ["--clean", "--if-exists", "--no-owner", "--exit-on-error"]
            _run(["pg_restore", *restore_args, "-d", database, str(dump)], url)
        engine_for(url).dispose()
    return manifest


def decryptable(url: str, keys: list[str]) -> int:
    """How many stored secrets the configured keys open; raises BackupError on the first that
    none does."""
    vault = Vault(keys)
    count = 0
    with engine_for(url).connect() as conn:
        texts = [*conn.scalars(select(Credential.ciphertext))]
        texts += [t for t in conn.scalars(select(Credential.refresh_ciphertext)) if t]
        texts += [*conn.scalars(select(StoredSetting.ciphertext))]
    for ciphertext in texts:
        try:
            vault.decrypt(ciphertext)
        except VaultError as error:
            raise BackupError(str(error)) from None
        count += 1
    return count
