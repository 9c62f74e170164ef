"""The GitLab stand-in's project webhooks: listed as GitLab lists them, and tested as GitLab
tests them, by really sending a sample event to the hook's URL with its secret token.
https://docs.gitlab.com/api/project_webhooks/

    hook = api.add_hook(project, f"{server}/webhooks/gitlab", token="…", note_events=True)
    api.add_note(project, "issues", 7, "Hello", "alice")   # GitLab tests notes with the last one
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from integrations.gitlab.standin.state import Answer, Request, message

if TYPE_CHECKING:
    from integrations.gitlab.standin.api import GitLabAPI

EVENT_FIELDS = (
    "push_events", "issues_events", "confidential_issues_events", "merge_requests_events",
    "tag_push_events", "note_events", "confidential_note_events", "job_events",
    "pipeline_events", "wiki_page_events", "deployment_events", "releases_events",
)  # fmt: skip
# The header GitLab sends with each test trigger it can send here.
TRIGGERS = {"note_events": "Note Hook", "issues_events": "Issue Hook"}
SAMPLES = Path(__file__).parents[1] / "fixtures"


@dataclass
class Hook:
    id: int
    project_id: int
    url: str
    token: str = ""
    events: dict[str, bool] = field(default_factory=dict)
    received: list[int] = field(default_factory=list)  # the status of each test delivery

    def json(self) -> dict[str, Any]:
        """GitLab's project hook; the secret token is never shown."""
        return {
            "id": self.id,
            "url": self.url,
            "name": "",
            "description": "",
            "project_id": self.project_id,
            **{name: self.events.get(name, name == "push_events") for name in EVENT_FIELDS},
            "push_events_branch_filter": "",
            "enable_ssl_verification": True,
            "alert_status": "executable",
            "disabled_until": None,
            "url_variables": [],
            "created_at": "2026-01-05T09:00:00.000Z",
        }


def list_hooks(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    if project is None:
        return 404, message(404, "Project Not Found")
    return 200, [h.json() for h in api.hooks.values() if h.project_id == project.id]


def test_hook(api: GitLabAPI, request: Request) -> Answer:
    """201 when the receiver answered 2xx; else 422 with what went wrong, as GitLab does."""
    project, hook = api.project(request), api.hooks.get(int(request.params["hook_id"]))
    if project is None or hook is None or hook.project_id != project.id:
        return 404, message(404, "Not found")
    trigger = request.params["trigger"]
    if trigger not in TRIGGERS:
        return 400, {"error": "trigger does not have a valid value"}
    notes = [n for n in api.notes.values() if n.project_id == project.id]
    if trigger == "note_events" and not notes:
        return 422, {"message": "Ensure the project has notes."}
    sample = _sample(TRIGGERS[trigger], project.id, project.path_with_namespace)
    status, text = _post(hook, TRIGGERS[trigger], sample)
    hook.received.append(status)
    if 200 <= status < 300:
        return 201, {"message": "201 Created"}
    return 422, {"message": text}


def _sample(event: str, project_id: int, path: str) -> bytes:
    name = {"Note Hook": "Note_Hook__on_issue", "Issue Hook": "Issue_Hook__labels_changed"}[event]
    payload = json.loads((SAMPLES / f"{name}.json").read_text())
    payload["project_id"] = project_id
    payload["project"] |= {"id": project_id, "path_with_namespace": path}
    return json.dumps(payload).encode()


def _post(hook: Hook, event: str, body: bytes) -> tuple[int, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitLab/18.6.0",
        "X-Gitlab-Event": event,
        "X-Gitlab-Token": hook.token,
        "X-Gitlab-Webhook-UUID": "5a7e1c6a-8b0c-4a8e-9f1d-2f3b4c5d6e7f",
    }
    request = urllib.request.Request(hook.url, body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, ""
    except urllib.error.HTTPError as error:
        return error.code, f"{error.code} {error.reason}"
    except (urllib.error.URLError, OSError, ValueError) as error:
        return 0, f"Hook execution failed: {type(error).__name__}"


HOOK_ROUTES = {
    "GET /projects/{id}/hooks": list_hooks,
    "POST /projects/{id}/hooks/{hook_id}/test/{trigger}": test_hook,
}
