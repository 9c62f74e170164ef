"""The history bench/web reads: jobs across a few repositories and states, newest last, and one
finished job whose trajectory has `steps` agent steps, written through the store's own
functions (`insert_jobs`, `append_event`) as the ingress and the worker write them."""

from __future__ import annotations

import json
import random
import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update

from resolver.core.redact import Redactor
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Job, utcnow

# (source, repository, share of the jobs)
REPOS = (
    ("github", "octo/api", 30),
    ("github", "octo/web", 20),
    ("github", "octo/infra", 10),
    ("github", "octo/docs", 5),
    ("gitlab", "platform/backend", 20),
    ("gitlab", "platform/mobile", 5),
    ("schedule", "octo/api", 10),
)
# (state, outcome, share of the jobs)
ENDS = (
    (JobState.SUCCEEDED, Outcome.CHANGED_CODE, 45),
    (JobState.SUCCEEDED, Outcome.ANSWERED, 15),
    (JobState.SUCCEEDED, Outcome.NO_CHANGES, 8),
    (JobState.FAILED, Outcome.COULD_NOT, 10),
    (JobState.FAILED, Outcome.ERROR, 5),
    (JobState.CANCELLED, Outcome.CANCELLED, 10),
    (JobState.RUNNING, None, 2),
    (JobState.QUEUED, None, 5),
)
ASKS = (
    "please fix the flaky export test",
    "why does the nightly build time out on arm64?",
    "bump the pinned httpx and fix what breaks",
    "the CSV export drops the last row when the file ends without a newline",
    "add a regression test for #{n} and fix it",
    "summarise what changed in the retry logic since the last release",
)
LONG_JOB_REPO = ("github", "octo/api")
REDACTOR = Redactor(())


def seed(count: int, steps: int, seed_value: int = 7) -> int:
    """`count` jobs, the last of them the long one; returns the long job's id."""
    chance = random.Random(seed_value)
    with session_scope() as session:
        news = [_new_job(chance, n) for n in range(count - 1)]
        news.append(_new_job(chance, count - 1, LONG_JOB_REPO))
        ids = [job_id for job_id, _ in jobs.insert_jobs(session.connection(), news)]
        # insert_jobs writes queued jobs; the columns their runs would have set come next,
        # in one batched UPDATE rather than ten thousand walks through the state machine.
        started = utcnow() - timedelta(days=60)
        *others, long_job = ids
        rows = [_ended(chance, job_id, started, n, count) for n, job_id in enumerate(others)]
        session.execute(update(Job), rows)
    write_trajectory(long_job, steps)
    return long_job


def _new_job(chance: random.Random, n: int, where: tuple[str, str] | None = None) -> jobs.NewJob:
    where = where or _pick(chance, [(s, r) for s, r, _ in REPOS], [w for *_, w in REPOS])
    source, repo = where
    number = chance.randrange(1, 4000)
    ask = chance.choice(ASKS).format(n=number)
    login = f"dev{chance.randrange(40):02d}"
    forge = "gitlab" if source == "gitlab" else "github"
    url = (
        f"https://{forge}.example/{repo}/issues/{number}#note-{n}" if source != "schedule" else None
    )
    trigger: dict[str, Any] = {
        "repo": repo,
        "number": number,
        "title": ask[:60],
        "provider": source,
        "delivery": str(uuid.UUID(int=chance.getrandbits(128))),
        "sender": {"id": str(1000 + n % 40), "login": login},
        "forge": {"provider": forge, "repo": repo, "base": "main", "fixes": number},
        **({"url": url} if url else {"forge_name": forge}),
    }
    return jobs.NewJob(
        source=source,
        task=f"nightly-deps: {ask}" if source == "schedule" else f"@resolver {ask}",
        repo=repo,
        requester=login,
        trigger=trigger,
        conversation_key=f"{source}:{repo}#{number}",
    )


def _ended(
    chance: random.Random, job_id: int, first: datetime, n: int, count: int
) -> dict[str, Any]:
    """The columns of a job that ran (or is running, or waits), created in id order."""
    state, outcome = _pick(chance, [(s, o) for s, o, _ in ENDS], [w for *_, w in ENDS])
    created = first + timedelta(days=60 * n / count)
    row: dict[str, Any] = {"id": job_id, "state": state, "outcome": outcome, "created_at": created}
    if state == JobState.QUEUED:
        return row
    took = timedelta(seconds=chance.randrange(40, 1800))
    row |= {
        "attempts": 1,
        "started_at": created + timedelta(seconds=2),
        "prompt_tokens": chance.randrange(5_000, 400_000),
        "completion_tokens": chance.randrange(500, 20_000),
        "cost_usd": round(chance.uniform(0.02, 3.5), 4),
    }
    if state == JobState.RUNNING:
        return row
    row |= {"finished_at": created + took, "result": {"summary": "Fixed the rounding."}}
    if outcome == Outcome.CHANGED_CODE:
        row |= {"branch": f"resolver/fix-{job_id}", "pr_url": f"https://example.test/pr/{job_id}"}
    if state == JobState.FAILED:
        row["error"] = "the tests still fail after 50 steps"
    return row


def _pick(chance: random.Random, items: list[Any], weights: list[int]) -> Any:
    return chance.choices(items, weights)[0]


def write_trajectory(job_id: int, steps: int) -> None:
    """`steps` tool calls, each an action and its observation (every tenth an edit, the rest
    test runs with a few KB of output), then the final diff; the job finishes changed_code."""
    with session_scope() as session:
        for step in range(1, steps + 1):
            for kind, payload in step_events(step):
                jobs.append_event(session, job_id, kind, payload, REDACTOR)
        jobs.append_event(session, job_id, "diff", {"diff": DIFF}, REDACTOR)
        job = jobs.get_job(session, job_id)
        job.started_at = job.created_at + timedelta(seconds=2)
        jobs.transition(job, JobState.RUNNING)
        job.finished_at = job.started_at + timedelta(minutes=41)
        jobs.finish_job(session, job, JobState.SUCCEEDED, Outcome.CHANGED_CODE)
        job.result = {"summary": "Totals are rounded once, at the end, half up."}
        job.cost_usd, job.prompt_tokens, job.completion_tokens = 3.87, 1_900_000, 41_000


def step_events(step: int) -> list[tuple[str, dict[str, Any]]]:
    call = {"step": step, "call_id": f"c{step}"}
    if step % 10 == 0:
        arguments = {"command": "str_replace", "path": "src/export.py", **edit(step)}
        content = f"The file src/export.py has been edited.\n{edit(step)['new_str']}"
        tool = "str_replace_editor"
    else:
        arguments = {"command": "pytest -q tests/test_x.py"}
        content, tool = pytest_output(step), "execute_bash"
    return [
        ("action", {**call, "tool": tool, "arguments": json.dumps(arguments)}),
        ("observation", {**call, "tool": tool, "content": content, "error": False}),
    ]


def edit(step: int) -> dict[str, str]:
    old = "".join(f"    total += row.amount  # {step}.{n}\n" for n in range(8))
    new = old.replace("row.amount", "round_half_up(row.amount)")
    return {"old_str": old, "new_str": new}


def pytest_output(step: int) -> str:
    """What `pytest -q` prints for one failing test among 120: about 3 KB."""
    failed_at = 20 + step % 50
    dots = "." * failed_at + "F" + "." * (71 - failed_at)
    got = f"Decimal('12.3{step % 10}')"
    log = "".join(
        f"INFO     export.writer:writer.py:{88 + n} wrote row {n} of batch {step}: "
        f"amount=10.{n:03d} currency=EUR account=ACC-{step:04d}-{n:02d}\n"
        for n in range(20)
    )
    return (
        f"{dots} [ 60%]\n{'.' * 48:<72} [100%]\n"
        f"{' FAILURES ':=^80}\n{' test_export_rounds_totals ':_^80}\n\n"
        "    def test_export_rounds_totals():\n"
        '        rows = [Row(amount=Decimal("10.005")), Row(amount=Decimal("2.335"))]\n'
        '>       assert export.totals(rows) == Decimal("12.34")\n'
        f"E       AssertionError: assert {got} == Decimal('12.34')\n"
        f"E        +  where {got} = <function totals at 0x7f3a2c1d0e50>([...])\n\n"
        f"tests/test_x.py:48: AssertionError\n{' Captured log call ':-^80}\n{log}"
        f"{' short test summary info ':=^80}\n"
        "FAILED tests/test_x.py::test_export_rounds_totals - AssertionError: assert Decimal(...\n"
        f"1 failed, 119 passed in {1 + step % 7}.{step % 100:02d}s\n"
    )


DIFF = (
    "--- a/src/export.py\n+++ b/src/export.py\n@@ -40,7 +40,7 @@ def totals(rows):\n"
    "     total = Decimal(0)\n     for row in rows:\n-        total += row.amount\n"
    "+        total += round_half_up(row.amount)\n     return total\n"
)
