"""`conflicts: fix`: what a push job could not resolve is said where people see it, on each
pull request it left conflicted, and not only on the job's page (a push has no conversation).

One comment per pull request per base commit: a notice, whose unique key makes a second
recording (another job for the same push) a no-op; the notice's callback is sent once, and a
try whose answer was lost finds its comment again by its tag.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Final

from resolver.contract.notices import NoticeContext
from resolver.contract.results import read_result
from resolver.contract.triggers import (
    base_push_in,
    notice_on_pull,
    read_trigger,
    repo_of,
)
from resolver.core.sanitize import sanitize
from resolver.features.conflicts.contract import (
    render_unresolved_report,
    report_key,
    unresolved_of,
)
from resolver.store.notices import NewNotice, insert_notices

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.store.models import Job

KIND: Final = "conflicts_unresolved"


def record_unresolved_reports(
    session: Session, job: Job, hosts: Collection[str], job_link: str
) -> list[int]:
    """A comment on each pull request whose conflicts a push job (`conflicts: fix`) left
    unresolved; the ids of the callbacks that post them (none recorded before)."""
    pulls = read_result(job.result).pulls
    trigger = read_trigger(job.trigger)
    full_name = repo_of(trigger) or job.repo or ""
    if base_push_in(trigger) is None or not full_name:
        return []
    notices: list[NewNotice] = []
    for number, done in pulls.items():
        found = unresolved_of(done.unresolved)
        if found is None or not found.files or not number.isdigit():
            continue
        body = render_unresolved_report(found, job.id, job_link)
        notices.append(
            NewNotice(
                provider=job.source,
                kind=KIND,
                dedup_key=report_key(full_name, int(number), found.base_sha),
                conversation_key=job.conversation_key or f"{job.source}:{full_name}",
                # File names are repository data: shown like any text the job did not write.
                body=sanitize(body, hosts),
                context=NoticeContext(trigger=notice_on_pull(full_name, int(number), trigger)),
                job_id=job.id,
            )
        )
    recorded = insert_notices(session.connection(), notices)
    return [callback_id for callback_id in recorded if callback_id is not None]
