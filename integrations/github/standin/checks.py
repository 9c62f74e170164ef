"""The GitHub stand-in's check runs and Actions job logs, in GitHub's shapes: a check run's
annotations, and a job's log, which the API answers with a redirect to a short-lived download
URL outside the API (GitHub's blob storage), served here without a token.
https://docs.github.com/rest/checks/runs#list-check-run-annotations
https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from integrations.github.standin.state import Answer, Page, Request, error_body
from integrations.standin.server import Reply, Text

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

DOWNLOADS = "/_blobs/job-logs/"


@dataclass(frozen=True)
class Redirect:
    """A 302 to `location` (GitHub's answer for a log download)."""

    location: str


@dataclass
class Checks:
    """Check runs' annotations and Actions jobs' logs by id, and every log download."""

    annotations: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[int, str] = field(default_factory=dict)
    downloads: list[dict[str, str]] = field(default_factory=list)
    """The headers each download of a log came with."""
    _links: dict[str, int] = field(default_factory=dict)


def list_annotations(api: GitHubAPI, request: Request) -> Answer:
    found = api.checks.annotations.get(int(request.params["check_run_id"]))
    if found is None:
        return 404, error_body(404, "Not Found")
    return 200, Page(list(found))


def download_job_logs(api: GitHubAPI, request: Request) -> Answer:
    """`302 Found` with the log's download URL in `Location`, as GitHub answers."""
    job_id = int(request.params["job_id"])
    if job_id not in api.checks.logs:
        return 404, error_body(404, "Not Found")
    link = secrets.token_urlsafe(12)
    api.checks._links[link] = job_id
    return 302, Redirect(f"{api.origin}{DOWNLOADS}{link}?sig={secrets.token_hex(8)}")


def serve_download(api: GitHubAPI, path: str, headers: dict[str, str]) -> Reply:
    """The log's text at its download URL; like blob storage, it wants no token."""
    api.checks.downloads.append(dict(headers))
    job_id = api.checks._links.get(path.removeprefix(DOWNLOADS).split("?", 1)[0])
    if job_id is None:
        return 404, Text("BlobNotFound", "text/plain"), {}
    return 200, Text(api.checks.logs[job_id], "text/plain"), {}


CHECK_ROUTES = {
    "GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations": list_annotations,
    "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs": download_job_logs,
}
