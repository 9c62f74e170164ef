"""Bitbucket Pipelines in the stand-in: a repository's pipelines (each a run on one commit of a
branch), their steps and each step's log, in the REST API's shapes (`pipeline`,
`pipeline_step`, their `pipeline_state_completed…` states).

    run = api.add_pipeline(repo, "resolver/3-fix", sha, [
        Step(result="SUCCESSFUL", log=b"lint ok\n"),
        Step(result="FAILED", log=b"... FAILED test_add\n"),
    ])

A completed step's log moves to long-term storage: the API answers a 307 to it, as Bitbucket
documents, and the storage (outside `/2.0`) takes no token, honours a suffix `Range`, and
records the headers it was sent (`api.log_downloads`). With `api.logs_in_storage` off, the API
serves the log itself.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, unquote

from integrations.bitbucket.standin.handlers import Call, Handler, page
from integrations.bitbucket.standin.state import link, now
from integrations.standin.server import Reply, WebHandler

if TYPE_CHECKING:
    from integrations.bitbucket.standin.api import BitbucketAPI

PIPELINES: Final = "/repositories/{workspace}/{repo_slug}/pipelines"
STEP: Final = f"{PIPELINES}/{{pipeline_uuid}}/steps/{{step_uuid}}"
LOG_STORAGE: Final = "/pipelines-log-storage"
_SUFFIX: Final = re.compile(r"^bytes=-([0-9]+)$")


def _uuid() -> str:
    return "{" + str(uuid.uuid4()) + "}"


@dataclass
class Step:
    """A completed step: its result (`SUCCESSFUL`, `FAILED`, `ERROR`), its log, and an
    ERROR's message."""

    result: str
    log: bytes = b""
    error: str | None = None
    uuid: str = field(default_factory=_uuid)
    completed_on: str = field(default_factory=now)


@dataclass
class Run:
    """A completed pipeline on `commit` of `branch`; its result is its worst step's."""

    repo: str
    branch: str
    commit: str
    build_number: int
    steps: list[Step]
    uuid: str = field(default_factory=_uuid)
    created_on: str = field(default_factory=now)

    @property
    def result(self) -> str:
        results = {step.result for step in self.steps}
        return next((r for r in ("ERROR", "FAILED") if r in results), "SUCCESSFUL")


def _result(kind: str, name: str, error: str | None) -> dict[str, Any]:
    """A completed state's `result` (`pipeline_state_completed_failed`, …); an ERROR's error."""
    found: dict[str, Any] = {"type": f"{kind}_completed_{name.lower()}", "name": name}
    if name == "ERROR":
        error_kind = "pipeline_error" if kind == "pipeline_state" else "pipeline_step_error"
        found["error"] = {"type": error_kind, "key": "error", "message": error or ""}
    return found


def run_json(run: Run, api: BitbucketAPI) -> dict[str, Any]:
    repo = api.repos[run.repo]
    href = f"{api.api_url}/repositories/{run.repo}/pipelines/{quote(run.uuid, safe='')}"
    return {
        "type": "pipeline",
        "uuid": run.uuid,
        "build_number": run.build_number,
        "state": {
            "type": "pipeline_state_completed",
            "name": "COMPLETED",
            "result": _result("pipeline_state", run.result, None),
        },
        "target": {
            "type": "pipeline_ref_target",
            "ref_type": "branch",
            "ref_name": run.branch,
            "commit": {"type": "commit", "hash": run.commit},
        },
        "repository": {"type": "repository", "full_name": repo.full_name, "uuid": repo.uuid},
        "created_on": run.created_on,
        "completed_on": max((s.completed_on for s in run.steps), default=run.created_on),
        "links": {"self": link(href), "steps": link(f"{href}/steps")},
    }


def step_json(step: Step) -> dict[str, Any]:
    return {
        "type": "pipeline_step",
        "uuid": step.uuid,
        "started_on": step.completed_on,
        "completed_on": step.completed_on,
        "state": {
            "type": "pipeline_step_state_completed",
            "name": "COMPLETED",
            "result": _result("pipeline_step_state", step.result, step.error),
        },
    }


def list_pipelines(api: BitbucketAPI, call: Call) -> Reply:
    """Newest first; `target.commit.hash`, `target.ref_name` and `target.branch` filter."""
    repo = api.repo_of(call)
    commit, branch = call.query("target.commit.hash"), call.query("target.ref_name")
    branch = branch or call.query("target.branch")
    found = [
        run
        for run in reversed(api.pipelines)
        if run.repo == repo.full_name
        and commit in (None, run.commit)
        and branch in (None, run.branch)
    ]
    path = f"/repositories/{repo.full_name}/pipelines"
    return page(api, call, path, [run_json(run, api) for run in found])


def _run_of(api: BitbucketAPI, call: Call) -> Run | None:
    repo, wanted = api.repo_of(call), unquote(call.params["pipeline_uuid"])
    return next((r for r in api.pipelines if (r.repo, r.uuid) == (repo.full_name, wanted)), None)


def list_steps(api: BitbucketAPI, call: Call) -> Reply:
    run = _run_of(api, call)
    if run is None:
        return api.refuse(404, "No pipeline with that UUID.")
    path = f"/repositories/{run.repo}/pipelines/{quote(run.uuid, safe='')}/steps"
    return page(api, call, path, [step_json(step) for step in run.steps])


def step_log(api: BitbucketAPI, call: Call) -> Reply:
    """A completed step's log: a 307 to its storage, or (logs_in_storage off) the log."""
    run = _run_of(api, call)
    wanted = unquote(call.params["step_uuid"])
    step = next((s for s in run.steps if s.uuid == wanted), None) if run else None
    if step is None:
        return api.refuse(404, "No such pipeline or step, or the step has no log.")
    if api.logs_in_storage:
        location = f"{api.url}{LOG_STORAGE}?step={quote(step.uuid, safe='')}"
        return 307, b"", {"Location": location}
    return ranged(step.log, call.routed.headers.get("range"))


def ranged(log: bytes, wanted: str | None) -> Reply:
    """The log, or its last N bytes for `Range: bytes=-N` (206, with its Content-Range)."""
    found = _SUFFIX.match(wanted or "")
    if found is None:
        return 200, log, {}
    start = max(len(log) - int(found.group(1)), 0)
    if not log:
        return 416, b"", {"Content-Range": "bytes */0"}
    return 206, log[start:], {"Content-Range": f"bytes {start}-{len(log) - 1}/{len(log)}"}


def stored_log(api: BitbucketAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """The long-term storage a step's log is moved to: no token needed, none wanted."""
    api.log_downloads.append(dict(headers))
    wanted = params.get("step", "")
    logs = {step.uuid: step.log for run in api.pipelines for step in run.steps}
    if wanted not in logs:
        return 404, b"NoSuchKey", {}
    return ranged(logs[wanted], headers.get("range"))


PIPELINE_ROUTES: Final[dict[str, Handler]] = {
    f"GET {PIPELINES}": list_pipelines,
    f"GET {PIPELINES}/{{pipeline_uuid}}/steps": list_steps,
    f"GET {STEP}/log": step_log,
}
LOG_ROUTES: Final[dict[str, WebHandler]] = {f"GET {LOG_STORAGE}": stored_log}
