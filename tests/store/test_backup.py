"""`resolver backup` and `resolver restore`: a deployment backed up while a job writes its
trajectory restores into a new one whose stored token still decrypts; a restore under other
keys is refused, naming why, and changes nothing."""

import tarfile
import threading
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy import func, inspect, select

from resolver.store import accounts, jobs
from resolver.store.db import engine_for, session_scope
from resolver.store.models import Credential, Job, JobEvent
from resolver.store.vault import Vault, store_credential
from tests.cli.test_cli_api import cli

TOKEN = "tok-backup-4d1e"


def said(done) -> str:
    return " ".join(done.stdout.split())


def _writing(job_id: int, stop: threading.Event) -> None:
    seq = 100
    while not stop.is_set():
        seq += 1
        with session_scope() as session:
            session.add(JobEvent(job_id=job_id, seq=seq, kind="tool", payload={"out": "x" * 500}))


def test_backup_during_a_job_restores_into_a_new_deployment(
    resolver_env, backend, empty_database
) -> None:
    keys = resolver_env.vars["RESOLVER_SECRET_KEYS"]
    with session_scope() as session:
        ada = accounts.add_user(session, "ada")
        store_credential(
            session, Vault([keys]), provider="github", kind="pat", secret=TOKEN, user_id=ada.id
        )
        job = jobs.create_job(session, jobs.NewJob(source="github", task="fix", repo="o/r"))
        job.state = "running"
        job_id = job.id
    stop = threading.Event()
    writer = threading.Thread(target=_writing, args=(job_id, stop))
    writer.start()
    try:
        path = resolver_env.tmp / "backups" / "one.backup"
        made = cli(resolver_env.child_env(), "backup", str(path))
    finally:
        stop.set()
        writer.join()
    assert made.returncode == 0, made.stdout + made.stderr
    with tarfile.open(path) as tar:
        assert sorted(tar.getnames())[1] == "manifest.json"
    raw = path.read_bytes()
    assert keys.encode() not in raw and TOKEN.encode() not in raw

    other = resolver_env.child_env(
        RESOLVER_DATABASE_URL=empty_database, RESOLVER_SECRET_KEYS=Fernet.generate_key().decode()
    )
    refused = cli(other, "restore", str(path))
    assert refused.returncode == 1
    assert "not in RESOLVER_SECRET_KEYS" in said(refused), refused.stdout
    assert keys not in refused.stdout
    assert not inspect(engine_for(empty_database)).get_table_names(), "nothing was restored"

    new = resolver_env.child_env(RESOLVER_DATABASE_URL=empty_database)
    restored = cli(new, "restore", str(path))
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "1 stored secret(s) decrypt" in said(restored)
    engine_for(empty_database).dispose()
    with engine_for(empty_database).connect() as conn:
        ciphertext = conn.scalar(select(Credential.ciphertext))
        assert conn.scalar(select(Job.state).where(Job.id == job_id)) == "running"
        assert conn.scalar(select(func.count()).select_from(JobEvent)) >= 1, "the trajectory so far"
    assert ciphertext is not None and Vault([keys]).decrypt(ciphertext).reveal() == TOKEN
    shown = cli(new, "users", "list")
    assert "ada" in shown.stdout

    again = cli(new, "restore", str(path))
    assert again.returncode == 1 and "--replace" in said(again)
    assert cli(new, "restore", str(path), "--replace").returncode == 0


def test_restore_refuses_what_is_not_a_backup(resolver_env, tmp_path: Path) -> None:
    junk = tmp_path / "junk.backup"
    junk.write_bytes(b"not a tar")
    done = cli(resolver_env.child_env(), "restore", str(junk))
    assert done.returncode == 1 and "not a Resolver backup" in said(done)
    missing = cli(resolver_env.child_env(), "restore", str(tmp_path / "none"))
    assert missing.returncode == 1 and "no backup at" in said(missing)
