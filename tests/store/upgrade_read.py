"""Run by the previous release's interpreter before an upgrade and by the current one after it
(tests/store/test_upgrade.py): print, as one JSON object, what the CLI and the JSON API say of
every row, the stored secrets as the vault opens them, and every table's row count. Only what
every release since 0.1.0 has is used."""

from __future__ import annotations

import json
import os
import sys

os.environ["COLUMNS"] = "240"  # rich wraps nothing

from sqlalchemy import MetaData, func, select
from starlette.testclient import TestClient
from typer.testing import CliRunner

from integrations import registry
from resolver.core.settings import get_settings
from resolver.store import configured, db
from resolver.store.db import get_engine
from resolver.store.models import Credential, StoredSetting
from resolver.store.vault import Vault


def main() -> None:
    compose = getattr(get_settings, "compose", None)
    if compose is not None:
        compose(registry.settings_classes)
    configured.install()
    use_database = getattr(db, "use_database", None)  # a version before it read its own
    if use_database is not None:
        use_database(lambda: get_settings().database_url)
    from resolver.cli import app

    runner = CliRunner()

    def cli(*args: str) -> str:
        done = runner.invoke(app, list(args))
        if done.exit_code != 0:
            raise SystemExit(f"resolver {' '.join(args)}: {done.exit_code}\n{done.output}")
        return done.output

    listed = json.loads(cli("jobs", "list", "--json"))
    out: dict[str, object] = {
        "users": cli("users", "list"),
        "routes": cli("routes", "list"),
        "schedules": json.loads(cli("schedules", "list", "--json")),
        "jobs": listed,
        "shown": {
            str(j["id"]): json.loads(cli("jobs", "show", str(j["id"]), "--json")) for j in listed
        },
    }
    from resolver.app import create_app

    client = TestClient(create_app())
    bearer = {"Authorization": f"Bearer {get_settings().admin_token.get_secret_value()}"}
    out["api"] = client.get("/api/jobs", headers=bearer).json()
    out["api_shown"] = {
        str(j["id"]): client.get(f"/api/jobs/{j['id']}", headers=bearer).json() for j in listed
    }
    vault = Vault(get_settings().fernet_keys)
    engine = get_engine()
    with engine.connect() as conn:
        out["tokens"] = sorted(
            vault.decrypt(c).reveal() for c in conn.scalars(select(Credential.ciphertext))
        )
        out["stored_settings"] = {
            row.name: vault.decrypt(row.ciphertext).reveal()
            for row in conn.execute(select(StoredSetting.name, StoredSetting.ciphertext))
        }
        tables = MetaData()
        tables.reflect(conn)
        out["counts"] = {
            name: conn.scalar(select(func.count()).select_from(table))
            for name, table in sorted(tables.tables.items())
            if name != "alembic_version"
        }
    engine.dispose()
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
