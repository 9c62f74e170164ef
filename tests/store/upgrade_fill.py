"""Run by the previous release's own interpreter and code (tests/store/test_upgrade.py): migrate
the database at RESOLVER_DATABASE_URL with that release's migrations, and fill it with every
kind of row through that release's store. Only what every release since 0.1.0 has is used."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from resolver.core.redact import Redactor
from resolver.core.settings import get_settings
from resolver.store import accounts, configured, db, jobs
from resolver.store.db import get_engine, session_scope
from resolver.store.migrate import upgrade
from resolver.store.models import (
    Callback,
    CallbackAttempt,
    CIAttempt,
    Delivery,
    Notice,
    RepoRoute,
    Schedule,
    ScheduleRepo,
    ScheduleRun,
    SteeringMessage,
    UsedLink,
)
from resolver.store.vault import Vault, store_credential
from resolver.store.web_sessions import open_session

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
STATES = ("queued", "running", "succeeded", "failed", "cancelled")


def main() -> None:
    use_database = getattr(db, "use_database", None)  # a version before it read its own
    if use_database is not None:
        use_database(lambda: get_settings().database_url)
    settings = get_settings()
    upgrade(settings.database_url)
    vault = Vault(settings.fernet_keys)
    redactor = Redactor(())
    with session_scope() as session:
        ada = accounts.add_user(session, "ada", admin=True)
        bob = accounts.add_user(session, "Bob")
        accounts.link_identity(session, "ada", "github", "583231", "ada")
        accounts.link_identity(session, "ada", "slack", "T1:U1")
        accounts.link_identity(session, "Bob", "gitlab", "77", "bob")
        installation = accounts.ensure_installation(session, "github", "4242")
        store_credential(
            session, vault, provider="github", kind="oauth", secret="old-ada-token-1",
            user_id=ada.id, scope="repo",
        )  # fmt: skip
        store_credential(
            session, vault, provider="github", kind="bot", secret="old-bot-token-2",
            installation_id=installation.id,
        )  # fmt: skip
        configured.save(session, settings, {"bot_name": "helperbot"})
        open_session(session, "github", "583231", NOW)
        session.add(UsedLink(key_hash="a" * 64, expires_at=NOW + timedelta(days=1)))
        session.add(RepoRoute(provider="slack", scope="C0123", repo="github:o/r"))
        session.add(CIAttempt(forge="github", repo="o/r", head_sha="f" * 40, attempts=2))
        made = []
        for n, state in enumerate(STATES):
            new = jobs.NewJob(
                source="github",
                task=f"fix number {n}",
                repo="o/r",
                requester="ada" if n % 2 == 0 else "bob",
                requester_id=ada.id if n % 2 == 0 else bob.id,
                trigger={"kind": "issue_comment", "url": f"https://forge.test/o/r/issues/{n}"},
                conversation_key=f"github:o/r#{n}",
            )
            job = jobs.create_job(session, new)
            session.flush()
            if state != "queued":
                job.state = state
                job.started_at = NOW
                job.attempts = 1
                job.lease_owner = "old-worker"
                job.lease_expires_at = NOW
                job.reserved_usd = 0.5
                job.reserved_tokens = 1000
                for step in range(3):
                    jobs.append_event(
                        session, job.id, "tool", {"command": f"ls {step}", "out": "a.py"}, redactor
                    )
            if state in ("succeeded", "failed", "cancelled"):
                job.finished_at = NOW + timedelta(minutes=n)
                job.outcome = {"succeeded": "changed_code", "failed": "could_not"}.get(
                    state, "cancelled"
                )
                job.cost_usd = 0.01 * (n + 1)
                job.prompt_tokens, job.completion_tokens = 1000 * n, 100 * n
                job.reserved_usd = None
                job.result = {"summary": f"done {n}", "steps": 3}
            if state == "succeeded":
                job.pr_url = "https://forge.test/o/r/pull/9"
                job.branch = "resolver/fix-9"
            if state == "failed":
                job.error = "the tests still fail"
            made.append(job)
        session.flush()
        session.add(Delivery(provider="github", delivery_key="hook:1", job_id=made[0].id))
        session.add(
            SteeringMessage(
                job_id=made[1].id, from_job_id=made[0].id, author="ada", text="also the docs"
            )
        )
        callback = Callback(
            job_id=made[2].id, provider="github", action="status", payload={"text": "done"}
        )
        session.add(callback)
        session.flush()
        session.add(CallbackAttempt(callback_id=callback.id, number=1, outcome="ok", status=200))
        session.add(
            Notice(
                provider="github", kind="unlinked", dedup_key="n:1",
                conversation_key="github:o/r#9", body="link your account", job_id=made[0].id,
            )
        )  # fmt: skip
        repo = ScheduleRepo(repo="github:o/r", user_id=ada.id, runs_per_hour=2)
        session.add(repo)
        session.flush()
        schedule = Schedule(
            repo_id=repo.id, name="nightly", origin="service", cron="0 3 * * *",
            timezone="UTC", task="triage", prompt="look at the open issues",
        )  # fmt: skip
        session.add(schedule)
        session.flush()
        session.add(
            ScheduleRun(schedule_id=schedule.id, due_at=NOW, reason="cron", job_id=made[2].id)
        )
    get_engine().dispose()


if __name__ == "__main__":
    main()
