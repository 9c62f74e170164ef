"""The Azure DevOps stand-in's builds (Azure Pipelines): a completed build, its timeline (one
record per failed task, with its error and its log) and each log as text, as `ci_report` reads
them."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote

from integrations.azuredevops.standin.state import BuildRun, NotFoundError, now
from integrations.standin.server import Reply, Routed

if TYPE_CHECKING:
    from integrations.azuredevops.standin.api import AzureDevOpsAPI

BUILD: Final = "/{organization}/{project}/_apis/build/builds/{buildId}"


def _run_of(api: AzureDevOpsAPI, call: Routed) -> BuildRun:
    found = api.builds.get(int(call.params["buildId"]))
    if found is None or unquote(call.params["project"]) != found.project:
        raise NotFoundError(call.params["buildId"])
    return found


def get_build(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    run = _run_of(api, call)
    answer = {
        "id": run.id,
        "buildNumber": f"20261120.{run.id}",
        "status": "completed",
        "result": run.result,
        "orchestrationPlan": {"planId": run.plan},
        "url": f"{api.url}/{run.project}/_apis/build/Builds/{run.id}",
    }
    return 200, answer, {}


def get_timeline(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    """Each failed task is a record with its error and its log (log ids from 1)."""
    run = _run_of(api, call)
    if call.params["timelineId"] != run.plan:
        raise NotFoundError(call.params["timelineId"])
    records = [
        {
            "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{run.id}/{n}")),
            "type": "Task",
            "name": name,
            "order": n,
            "state": "completed",
            "result": "failed",
            "issues": [{"type": "error", "category": "General", "message": message}],
            "log": {"id": n, "type": "Container", "url": f"{api.url}/logs/{n}"},
        }
        for n, (name, message, _) in enumerate(run.failed, start=1)
    ]
    return 200, {"id": run.plan, "records": records, "lastChangedOn": now()}, {}


def get_log(api: AzureDevOpsAPI, call: Routed, me: str) -> Reply:
    run, n = _run_of(api, call), int(call.params["logId"])
    if not 1 <= n <= len(run.failed):
        raise NotFoundError(call.params["logId"])
    return 200, run.failed[n - 1][2], {}


BUILD_ROUTES: Final = {
    f"GET {BUILD}": get_build,
    f"GET {BUILD}/timeline/{{timelineId}}": get_timeline,
    f"GET {BUILD}/logs/{{logId}}": get_log,
}
