"""The schedule's pull request: what became of it, what the schedule remembers of it, and the
one note the bot leaves when someone else has taken its branch over.

The functions that take a `Session` are units of work for `store.in_transaction`: the runner
calls each between its network steps."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from resolver.agent.git import Clone
from resolver.contract import outbound as providers
from resolver.contract.notices import NoticeContext
from resolver.contract.triggers import TaskTrigger, notice_on_pull
from resolver.schedules import look
from resolver.schedules.decide import OPEN, Finding, Remembered
from resolver.store.models import Job, Schedule, ScheduleRun
from resolver.store.notices import NewNotice


def bot_email(bot_name: str) -> str:
    """The address the bot commits with (resolver/worker/push.py `push`)."""
    return f"{bot_name}@users.noreply"


def find(
    forge: providers.Forge,
    full_name: str,
    remembered: Remembered,
    clone: Clone,
    ref: str,
    bot_name: str,
    was_opened: Callable[[str], bool],
) -> tuple[Finding, providers.PullInfo | None]:
    """What became of the pull request the schedule remembers as open (the open one, if so).
    `was_opened(branch)` reads the store, in a transaction of its own, only when the forge
    has no open pull request for the branch."""
    if remembered.state != OPEN or not remembered.branch:
        return Finding.NONE, None
    pull = forge.find_open_pull(full_name, remembered.branch)
    if pull is not None:
        edited = look.others_pushed(clone, ref, remembered.branch, bot_email(bot_name))
        return (Finding.EDITED if edited else Finding.OPEN), pull
    # The forge protocol reports no merge state: git tells merged from closed.
    if not was_opened(remembered.branch):
        return Finding.NEVER_OPENED, None
    merged = look.was_merged(clone, ref, remembered.head)
    return (Finding.MERGED if merged else Finding.DECLINED), None


def was_opened(session: Session, schedule_id: int, branch: str) -> bool:
    """Whether a run of the schedule got a pull request for `branch` (its opening can fail)."""
    found = session.scalar(
        select(Job.id)
        .join(ScheduleRun, ScheduleRun.job_id == Job.id)
        .where(
            ScheduleRun.schedule_id == schedule_id,
            Job.branch == branch,
            Job.pr_url.is_not(None),
        )
        .limit(1)
    )
    return found is not None


def remember(session: Session, schedule_id: int, remembered: Remembered) -> None:
    session.execute(
        update(Schedule)
        .where(Schedule.id == schedule_id)
        .values(
            pull_state=remembered.state,
            pull_branch=remembered.branch,
            pull_head=remembered.head,
            pull_inputs=remembered.inputs,
        )
        .execution_options(synchronize_session=False)
    )


def render_edited_note(name: str, branch: str) -> str:
    return (
        f"Someone else has pushed to `{branch}`, so schedule `{name}` will not update this pull "
        "request again: I never overwrite other people's commits. Merge or close it when you "
        "are done; the schedule then goes on as before."
    )


def build_edited_notice(
    job_id: int,
    schedule_id: int,
    name: str,
    forge_name: str,
    full_name: str,
    pull: providers.PullInfo,
    trigger: TaskTrigger,
) -> NewNotice:
    """The note that says once, on the pull request, why the bot stopped updating it (a
    notice: its unique key makes a second run's note a no-op)."""
    return NewNotice(
        provider=forge_name,
        kind="schedule_edited",
        dedup_key=f"schedule:{schedule_id}:edited:{pull.number}",
        conversation_key=f"schedule:{schedule_id}",
        body=render_edited_note(name, pull.head),
        context=NoticeContext(trigger=notice_on_pull(full_name, pull.number, trigger)),
        job_id=job_id,
    )
