"""Red CI on the bot's own Bitbucket pull request, read from Bitbucket Pipelines: the failed
run of the commit (the one the status names by its build number, else the newest failed one),
its failed steps, and the end of the first one's log, as `ci_report` gives the CI fix job.

The documented calls (`read:pipeline:bitbucket`): `GET …/pipelines?target.commit.hash=`,
`GET …/pipelines/{pipeline_uuid}/steps`, `GET …/steps/{step_uuid}/log`, which "supports (and
encourages!)" a Range request and, once the step is complete, redirects (307) to the log's
long-term storage. A status from another CI has no run here: its fix starts from the status.
https://developer.atlassian.com/cloud/bitbucket/rest/api-group-pipelines/
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote, urljoin, urlsplit

import httpx

from integrations.bitbucket.client import ERRORS, BitbucketClient, check_answer, split_repo
from integrations.bitbucket.provider import job_token, user_agent
from integrations.bitbucket.tokens import api_url
from integrations.toolkit.answers import reading, text
from integrations.toolkit.limits import tail_limits
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.provider import CIReport
from resolver.contract.triggers import FailedCheck, TaskTrigger, repo_of
from resolver.core.settings import Settings
from resolver.features.ci.contract import LOG_READ_BYTES, LOG_TAIL_CHARS, tail

_RANGE_START: Final = re.compile(r"^bytes ([0-9]+)-")


class PipelinesClient(BitbucketClient):
    """Bitbucket Pipelines' side of the REST API: a commit's pipelines, their steps and a
    step's log (`read:pipeline:bitbucket`)."""

    def pipelines(self, repo: str, commit: str) -> list[dict[str, Any]]:
        """The pipelines run on `commit`, as Bitbucket lists them (at most MAX_PAGES pages)."""
        workspace, slug = split_repo(repo)
        action = "GET /repositories/{workspace}/{repo_slug}/pipelines"
        path = f"/repositories/{workspace}/{slug}/pipelines"
        return list(self._pages(action, path, {"target.commit.hash": commit}))

    def steps(self, repo: str, pipeline: str) -> list[dict[str, Any]]:
        action = "GET /repositories/{workspace}/{repo_slug}/pipelines/{pipeline_uuid}/steps"
        return list(self._pages(action, f"{self._pipeline_path(repo, pipeline)}/steps"))

    def _pipeline_path(self, repo: str, pipeline: str) -> str:
        workspace, slug = split_repo(repo)
        return f"/repositories/{workspace}/{slug}/pipelines/{quote(pipeline, safe='')}"

    def step_log_tail(
        self, repo: str, pipeline: str, step: str, keep: int, budget: int
    ) -> tuple[bytes, bool]:
        """The last `keep` bytes of a step's log (at most `budget` read), and whether anything
        before them was left out. They are asked for as a suffix range, as Bitbucket
        encourages; a completed step's log answers with a 307 to its long-term storage, which
        is read without the token."""
        action = (
            "GET /repositories/{workspace}/{repo_slug}/pipelines/{pipeline_uuid}/steps"
            "/{step_uuid}/log"
        )
        url = f"{self._api}{self._pipeline_path(repo, pipeline)}/steps/{quote(step, safe='')}/log"
        wanted = {"Range": f"bytes=-{keep}", "User-Agent": self._user_agent}
        with self._errors(action), self._http(tail_limits(budget)) as http:
            with http.stream("GET", url, headers=self._headers() | wanted) as response:
                if response.status_code != 307:
                    return _read_tail(action, response, keep, budget)
                storage = _storage(action, url, response.headers.get("location"))
            with http.stream("GET", storage, headers=wanted) as response:
                return _read_tail("the step's stored log", response, keep, budget)


def _storage(action: str, url: str, location: str | None) -> str:
    """Where a 307 sends a step's log, if it is an HTTP(S) address."""
    target = urljoin(url, location or "")
    if not location or urlsplit(target).scheme not in ("http", "https"):
        raise PermanentCallbackError(f"{action}: the log's redirect names no HTTP address")
    return target


def _read_tail(action: str, response: httpx.Response, keep: int, budget: int) -> tuple[bytes, bool]:
    """What a (ranged) answer holds of the log's end, at most `budget` read: a 206
    is the end already; a 200 is the whole log, of which the last `keep` bytes are kept; a 416
    is an empty log."""
    if response.status_code == 416:
        return b"", False
    check_answer(action, response)
    kept, total = b"", 0
    for chunk in response.iter_bytes():
        total += len(chunk)
        kept = (kept + chunk)[-keep:]
        if total >= budget:
            break
    first = _RANGE_START.match(response.headers.get("content-range", ""))
    skipped = int(first.group(1)) if response.status_code == 206 and first else 0
    return kept, skipped > 0 or total > len(kept)


FAILED: Final = frozenset({"FAILED", "ERROR"})


def result_of(item: Mapping[str, Any]) -> str:
    """A pipeline's or a step's completed result (`FAILED`, …), or its state's name."""
    state = item.get("state") or {}
    result = state.get("result") or {}
    return str(result.get("name") or state.get("name") or "")


def failed_run(runs: list[dict[str, Any]], number: int | None) -> dict[str, Any] | None:
    """The run the status names by its build number, else the newest one that failed."""
    named = [r for r in runs if number is not None and r.get("build_number") == number]
    failed = [r for r in runs if result_of(r) in FAILED]
    found = named or sorted(failed, key=lambda r: int(r.get("build_number") or 0))[-1:]
    return found[0] if found else None


def step_errors(steps: list[dict[str, Any]]) -> tuple[str, ...]:
    """An ERROR step's message (a step that could not run: its image, its runner)."""
    errors = ((s.get("state") or {}).get("result") or {} for s in steps)
    return tuple(
        f"step error: {(e.get('error') or {}).get('message')}"
        for e in errors
        if e.get("name") == "ERROR" and (e.get("error") or {}).get("message")
    )


def ci_report(
    trigger: TaskTrigger, requester_id: int | None, check: FailedCheck, settings: Settings
) -> CIReport:
    """The end of the failed step's log, and the messages of steps that could not run."""
    repo = repo_of(trigger)
    if repo is None:
        return CIReport()
    token = job_token(trigger, requester_id, settings)
    client = PipelinesClient(api_url(settings), token, user_agent=user_agent(settings))
    # The calls translate their own failures; a run or a step of the wrong shape is an
    # unusable answer, which leaves the report out, not an error that fails the fix.
    with reading(ERRORS, "GET /repositories/{workspace}/{repo_slug}/pipelines"):
        run = failed_run(client.pipelines(repo, check.head_sha), check.pipeline_id)
        if run is None:
            return CIReport(unavailable=(f"no Bitbucket Pipelines run of {check.head_sha[:12]}",))
        run_uuid = text(run["uuid"])
        steps = client.steps(repo, run_uuid)
        failed = [s for s in steps if result_of(s) in FAILED]
        notes = step_errors(steps)
        if not failed:
            return CIReport(notes, unavailable=("the failed step of the pipeline",))
        step_uuid = text(failed[0]["uuid"])
    more = len(failed) - 1
    kept, cut = client.step_log_tail(repo, run_uuid, step_uuid, LOG_TAIL_CHARS * 4, LOG_READ_BYTES)
    log_end, shortened = tail(kept.decode("utf-8", errors="replace"))
    unread = (f"the logs of {more} more failed step(s)",) if more else ()
    return CIReport(notes, log_end, cut or shortened, unread)
