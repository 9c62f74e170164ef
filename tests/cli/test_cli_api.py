"""The CLI and JSON API contracts other tools rely on."""

import json
import subprocess

from starlette.testclient import TestClient

from tests.store.test_storage import PUBLIC_FIELDS, new_job
from tests.support import procs


def cli(env, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`resolver ARGS` in a process of its own (forked from the tests' warm parent)."""
    return procs.run(env, "-m", "resolver.cli", *args, stdin=stdin)


def test_users_and_tokens_from_stdin(resolver_env) -> None:
    env = resolver_env.child_env()
    assert cli(env, "users", "add", "ada").returncode == 0
    linked = cli(env, "users", "link", "ada", "--provider", "slack", "--external-id", "T1:U1")
    assert linked.returncode == 0, linked.stdout
    listed = cli(env, "users", "list")
    assert "slack:T1:U1" in listed.stdout
    stored = cli(
        env, "tokens", "set", "--provider", "github", "--user", "ada", stdin="tok-xyz-987\n"
    )
    assert stored.returncode == 0, stored.stdout
    empty = cli(env, "tokens", "set", "--provider", "github", "--user", "ada")
    assert empty.returncode == 1 and "standard input" in empty.stdout
    unknown = cli(env, "users", "link", "nobody", "--provider", "github", "--external-id", "1")
    assert unknown.returncode == 1 and "resolver users add nobody" in unknown.stdout
    db = (resolver_env.tmp / "resolver.db").read_bytes()
    assert b"tok-xyz-987" not in db


def test_users_revoke_removes_the_link_and_the_users_token_there(resolver_env) -> None:
    from sqlalchemy import select

    from resolver.store import accounts
    from resolver.store.db import session_scope
    from resolver.store.models import Credential, Identity
    from resolver.store.vault import Vault, store_credential

    with session_scope() as session:
        ada = accounts.add_user(session, "ada")
        accounts.link_identity(session, "ada", "github", "583231", "ada")
        accounts.link_identity(session, "ada", "slack", "T1:U1")
        vault = Vault([resolver_env.vars["RESOLVER_SECRET_KEYS"]])
        store_credential(
            session, vault, provider="github", kind="oauth", secret="tok-1", user_id=ada.id
        )
    env = resolver_env.child_env()
    revoked = cli(env, "users", "revoke", "--provider", "github", "--external-id", "583231")
    assert revoked.returncode == 0 and "revoked github:583231 of ada" in revoked.stdout
    with session_scope() as session:
        assert [i.provider for i in session.scalars(select(Identity))] == ["slack"]
        assert session.scalars(select(Credential)).all() == [], "its github token went too"
    again = cli(env, "users", "revoke", "--provider", "github", "--external-id", "583231")
    assert again.returncode == 1 and "no github account 583231 is linked" in again.stdout


def test_jobs_list_json_carries_the_contract_fields(resolver_env) -> None:
    job_id = new_job()
    done = cli(resolver_env.child_env(), "jobs", "list", "--json")
    rows = json.loads(done.stdout)
    assert rows[0]["id"] == job_id
    assert set(rows[0]) >= PUBLIC_FIELDS
    shown = json.loads(cli(resolver_env.child_env(), "jobs", "show", str(job_id), "--json").stdout)
    assert shown["trajectory"] == []
    cancelled = cli(resolver_env.child_env(), "jobs", "cancel", str(job_id))
    assert "cancelled" in cancelled.stdout
    missing = cli(resolver_env.child_env(), "jobs", "show", "424242")
    assert missing.returncode == 1 and "no job 424242" in missing.stdout


def test_api_needs_the_admin_token(resolver_env) -> None:
    from resolver.app import create_app

    job_id = new_job()
    client = TestClient(create_app())
    token = resolver_env.vars["RESOLVER_ADMIN_TOKEN"]
    assert client.get("/api/jobs").status_code == 401
    assert client.get("/api/jobs", headers={"Authorization": "Bearer wrong"}).status_code == 401
    auth = {"Authorization": f"Bearer {token}"}
    listed = client.get("/api/jobs", headers=auth)
    assert listed.status_code == 200 and listed.json()[0]["id"] == job_id
    shown = client.get(f"/api/jobs/{job_id}", headers=auth)
    assert shown.status_code == 200 and shown.json()["trajectory"] == []
    assert client.get("/api/jobs/nope", headers=auth).status_code == 404
    assert client.get("/api/jobs?limit=x", headers=auth).status_code == 400
    assert client.get("/healthz").text == "ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json() == {"database": "ok", "redis": "ok"}


def test_readyz_reports_a_dead_redis(resolver_env, monkeypatch) -> None:
    from resolver.app import create_app
    from tests.conftest import reset_caches

    monkeypatch.setenv("RESOLVER_REDIS_URL", "redis://127.0.0.1:1/0")
    reset_caches()
    ready = TestClient(create_app()).get("/readyz")
    assert ready.status_code == 503 and ready.json()["redis"].startswith("error")


def test_doctor_names_what_is_wrong_and_how_to_fix_it(resolver_env) -> None:
    env = resolver_env.child_env(RESOLVER_REDIS_URL="redis://127.0.0.1:1/0")
    done = cli(env, "doctor")
    assert done.returncode == 1
    assert "redis" in done.stdout and "fail" in done.stdout and "redis-server" in done.stdout


def test_an_upgrade_refused_over_names_in_two_cases_is_fixed_with_users_rename(
    tmp_path, resolver_env
) -> None:
    """`resolver db upgrade` names the users whose names differ only in case, in one line and
    without a traceback, and `resolver users rename` clears the way."""
    from sqlalchemy import insert

    from resolver.store.db import engine_for
    from resolver.store.migrate import upgrade
    from resolver.store.models import User

    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0013")
    with engine_for(url).begin() as conn:
        for name in ("Boss", "boss"):
            conn.execute(insert(User.__table__).values(name=name, is_admin=False))
    engine_for(url).dispose()
    env = resolver_env.child_env(RESOLVER_DATABASE_URL=url)
    refused = cli(env, "db", "upgrade")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "'Boss', 'boss'" in refused.stderr and "resolver users rename" in refused.stderr
    taken = cli(env, "users", "rename", "boss", "BOSS")
    assert taken.returncode == 1 and "'Boss' already exists" in taken.stdout
    assert cli(env, "users", "rename", "boss", "boss-2").returncode == 0
    done = cli(env, "db", "upgrade")
    assert done.returncode == 0 and "up to date" in done.stdout
    assert "boss-2" in cli(env, "users", "list").stdout


def test_jobs_retry_queues_only_a_failed_or_cancelled_job_again(resolver_env) -> None:
    job_id = new_job()
    env = resolver_env.child_env()
    queued = cli(env, "jobs", "retry", str(job_id))
    assert queued.returncode == 1 and "only failed or cancelled" in queued.stdout
    assert "cancelled" in cli(env, "jobs", "cancel", str(job_id)).stdout
    again = cli(env, "jobs", "retry", str(job_id))
    assert again.returncode == 0 and f"job {job_id} queued again" in again.stdout
    shown = json.loads(cli(env, "jobs", "show", str(job_id), "--json").stdout)
    assert shown["state"] == "queued"
    missing = cli(env, "jobs", "retry", "424242")
    assert missing.returncode == 1 and "no job 424242" in missing.stdout
