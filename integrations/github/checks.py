"""A failing check on the bot's pull request as GitHub reports it: the check run's annotations
and, for a GitHub Actions job, the end of its log, each within a budget. The log is read as a
stream from GitHub's download URL (no token goes there) and only its tail is kept."""

from __future__ import annotations

from typing import Final

import httpx

from integrations.github.auth import ci_client
from integrations.github.trigger import part_of
from integrations.toolkit.http import bounded_client
from integrations.toolkit.limits import tail_limits
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.provider import CIReport
from resolver.contract.triggers import FailedCheck, TaskTrigger, repo_of
from resolver.core.settings import Settings
from resolver.features.ci.contract import (
    LOG_READ_BYTES,
    LOG_TAIL_CHARS,
    MAX_ANNOTATIONS,
    limited,
    render_annotation,
    tail,
)

ACTIONS_APP: Final = "github-actions"
# Characters are at most four bytes: this many bytes always hold the characters kept.
_TAIL_BYTES: Final = LOG_TAIL_CHARS * 4


def ci_report(
    trigger: TaskTrigger, requester_id: int | None, check: FailedCheck, settings: Settings
) -> CIReport:
    """Annotations and the log's tail. A check run of GitHub Actions is one job, with the
    same id; other apps' checks have no log here."""
    repo = repo_of(trigger) or ""
    if check.check_id is None or not repo:
        return CIReport()
    client = ci_client(trigger, requester_id, settings)
    notes = [
        render_annotation(item)
        for item in client.check_annotations(repo, check.check_id, MAX_ANNOTATIONS)
    ]
    if part_of(trigger).check_app != ACTIONS_APP:
        return CIReport(annotations=limited(notes))
    text, cut = read_tail(client.job_log_location(repo, check.check_id))
    return CIReport(annotations=limited(notes), log_tail=text, log_cut=cut)


def read_tail(url: str, budget: int = LOG_READ_BYTES) -> tuple[str, bool]:
    """The last LOG_TAIL_CHARS of the text at `url`, read as a stream of at most `budget` bytes;
    and whether anything before it was left out."""
    kept, total = b"", 0
    try:
        with (
            bounded_client(tail_limits(budget)) as http,
            http.stream("GET", url, follow_redirects=True) as response,
        ):
            if response.status_code >= 400:
                raise PermanentCallbackError(f"the log download answered {response.status_code}")
            for chunk in response.iter_bytes():
                total += len(chunk)
                kept = (kept + chunk)[-_TAIL_BYTES:]
                if total >= budget:
                    break
    except httpx.TransportError as error:
        raise TransientCallbackError(f"the log could not be read: {type(error).__name__}") from None
    except httpx.DecodingError as error:
        raise PermanentCallbackError(f"the log was unusable: {type(error).__name__}") from None
    text, cut = tail(kept.decode("utf-8", errors="replace"))
    return text, cut or total > len(kept)
