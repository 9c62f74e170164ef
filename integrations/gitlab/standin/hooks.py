"""GitLab's webhook API on the GitLab stand-in: project and group hooks (create, list, edit,
test), in GitLab's shapes, and the deliveries a test sends to the hook's URL.

    api = GitLabHooksAPI()
    owner = api.add_token("glpat-owner", "olga")
    project = api.add_project("group/widgets", clone_url="…")
    api.add_member(project, owner, 40)                    # Maintainer: may manage hooks
    api.add_group("group", {owner: 50})                   # Owner of the group
    api.hooks                                             # what was registered
    api.deliveries                                        # what the test deliveries got back

A hook's `token` and `signing_token` are write-only: answers say `token_present` and
`signing_token_present` instead. `POST …/hooks/:hook_id/test/:trigger` sends a sample event to
the hook's URL at once, with `X-Gitlab-Token` and, when the instance signs (`signs`) and the
hook has a signing token, a Standard Webhooks signature.
https://docs.gitlab.com/api/project_webhooks/, https://docs.gitlab.com/api/group_webhooks/
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

from integrations.gitlab.standin.api import GitLabAPI
from integrations.gitlab.standin.state import message
from integrations.standin.server import Reply, Routed, Routes

MAINTAINER, OWNER = 40, 50
FLAGS = (
    "push_events",
    "tag_push_events",
    "issues_events",
    "confidential_issues_events",
    "merge_requests_events",
    "note_events",
    "confidential_note_events",
    "pipeline_events",
    "job_events",
    "deployment_events",
    "releases_events",
    "wiki_page_events",
)
# What GitLab sends for each test trigger: a recorded payload of that event.
SAMPLES = {"note_events": ("Note Hook", "Note_Hook__on_issue.json")}
FIXTURES = Path(__file__).parents[1] / "fixtures"


@dataclass
class Hook:
    id: int
    parent: str  # "projects" or "groups"
    parent_id: int | str
    url: str
    token: str | None = None
    signing_token: str | None = None
    flags: dict[str, bool] = field(default_factory=dict)
    enable_ssl_verification: bool = True

    def as_json(self) -> dict[str, Any]:
        key = "project_id" if self.parent == "projects" else "group_id"
        return {
            "id": self.id,
            "url": self.url,
            key: self.parent_id,
            "enable_ssl_verification": self.enable_ssl_verification,
            "token_present": bool(self.token),
            "signing_token_present": bool(self.signing_token),
            "created_at": "2026-01-05T09:00:00.000Z",
            **{flag: self.flags.get(flag, flag == "push_events") for flag in FLAGS},
        }


@dataclass(frozen=True)
class Delivery:
    hook_id: int
    event: str
    headers: dict[str, str]
    status: int


class Refused(Exception):
    """GitLab's error answer, from deep in a handler."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply[0])
        self.reply = reply


HookHandler = Callable[["GitLabHooksAPI", Routed, int], Reply]


class GitLabHooksAPI(GitLabAPI):
    """The GitLab stand-in with its webhook API."""

    def __init__(self, *, signs: bool = True) -> None:
        # Its own hook records (project and group) replace the base's project hook list.
        self.hooks: dict[int, Hook] = {}  # type: ignore[assignment]
        self.groups: dict[str, dict[int, int]] = {}  # full path -> user id -> access level
        self.deliveries: list[Delivery] = []
        self.signs = signs  # the instance's `webhook_signing_token` feature flag
        super().__init__()
        self.routes = Routes([*HOOK_ROUTES, *self.routes.keys])

    def add_group(self, path: str, members: dict[int, int]) -> None:
        self.groups[path] = dict(members)

    def serve(self, call: Routed) -> Reply:
        handler = HOOK_ROUTES.get(call.route)
        if handler is None:
            return super().serve(call)
        user = self.tokens.get(self._token(call.headers))
        if user is None:
            return 401, message(401, "Unauthorized"), {}
        try:
            return handler(self, call, user)
        except Refused as refused:
            return refused.reply

    def parent(self, call: Routed, user: int) -> tuple[str, int | str]:
        """The hook's project or group; Refused with GitLab's 404 or 403 when the user may not
        manage its hooks."""
        kind = call.route.split("/")[1]
        key = unquote(call.params["id"])
        if kind == "projects":
            project = self.project_by_key(key)
            if project is None:
                raise Refused((404, message(404, "Project Not Found"), {}))
            allowed = project.members.get(user, 0) >= MAINTAINER
            found: tuple[str, int | str] = (kind, project.id)
        else:
            if key not in self.groups:
                raise Refused((404, message(404, "Group Not Found"), {}))
            allowed = self.groups[key].get(user, 0) >= OWNER
            found = (kind, key)
        if not allowed:
            raise Refused((403, message(403, "Forbidden"), {}))
        return found

    def deliver(self, hook: Hook, trigger: str) -> Delivery:
        """Send the trigger's sample event to the hook's URL, as GitLab's test does."""
        event, fixture = SAMPLES[trigger]
        body = (FIXTURES / fixture).read_bytes()
        key = str(uuid.uuid4())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "GitLab/18.6.0",
            "X-Gitlab-Event": event,
            "X-Gitlab-Instance": self.url,
            "X-Gitlab-Webhook-UUID": str(uuid.uuid4()),
            "X-Gitlab-Event-UUID": str(uuid.uuid4()),
            "Idempotency-Key": key,
        }
        if hook.token:
            headers["X-Gitlab-Token"] = hook.token
        if self.signs and hook.signing_token:
            headers |= standard_signature(hook.signing_token, key, body)
        answer = httpx.post(hook.url, content=body, headers=headers, timeout=10, trust_env=False)
        delivery = Delivery(hook.id, event, headers, answer.status_code)
        self.deliveries.append(delivery)
        return delivery


def standard_signature(secret: str, msg_id: str, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers for `body`. https://www.standardwebhooks.com/"""
    timestamp = str(int(time.time()))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": timestamp,
        "webhook-signature": f"v1,{digest}",
    }


def _apply(hook: Hook, body: dict[str, Any]) -> None:
    if "url" in body:
        hook.url = str(body["url"])
    for name in ("token", "signing_token"):
        if name in body:
            setattr(hook, name, body[name] or None)
    if "enable_ssl_verification" in body:
        hook.enable_ssl_verification = bool(body["enable_ssl_verification"])
    hook.flags |= {flag: bool(body[flag]) for flag in FLAGS if flag in body}


def _valid(body: Any, signs: bool) -> dict[str, Any]:
    """The hook's attributes, or GitLab's 400; without the signing flag, `signing_token` is
    silently ignored."""
    if not isinstance(body, dict) or not body.get("url"):
        raise Refused((400, message(400, "url is missing"), {}))
    token = body.get("signing_token")
    if token and not _is_whsec(str(token)):
        problem = "signing_token must be in whsec_<base64> format encoding a 32-byte key"
        raise Refused((400, message(400, problem), {}))
    return body if signs else {k: v for k, v in body.items() if k != "signing_token"}


def _is_whsec(token: str) -> bool:
    try:
        return len(base64.b64decode(token.removeprefix("whsec_"), validate=True)) == 32
    except ValueError:
        return False


def list_hooks(api: GitLabHooksAPI, call: Routed, user: int) -> Reply:
    parent = api.parent(call, user)
    found = [h.as_json() for h in api.hooks.values() if (h.parent, h.parent_id) == parent]
    return 200, found, {}


def create_hook(api: GitLabHooksAPI, call: Routed, user: int) -> Reply:
    kind, parent_id = api.parent(call, user)
    body = _valid(call.body, api.signs)
    hook = Hook(api.new_id(), kind, parent_id, "")
    _apply(hook, body)
    api.hooks[hook.id] = hook
    return 201, hook.as_json(), {}


def _hook(api: GitLabHooksAPI, call: Routed, user: int) -> Hook:
    parent = api.parent(call, user)
    hook_id = call.params["hook_id"]
    hook = api.hooks.get(int(hook_id)) if hook_id.isdigit() else None
    if hook is None or (hook.parent, hook.parent_id) != parent:
        raise Refused((404, message(404, "Not found"), {}))
    return hook


def get_hook(api: GitLabHooksAPI, call: Routed, user: int) -> Reply:
    return 200, _hook(api, call, user).as_json(), {}


def edit_hook(api: GitLabHooksAPI, call: Routed, user: int) -> Reply:
    hook = _hook(api, call, user)
    _apply(hook, _valid({"url": hook.url} | (call.body or {}), api.signs))
    return 200, hook.as_json(), {}


def test_hook(api: GitLabHooksAPI, call: Routed, user: int) -> Reply:
    hook = _hook(api, call, user)
    if call.params["trigger"] not in SAMPLES:
        return 400, message(400, "trigger does not have a valid value"), {}
    api.deliver(hook, call.params["trigger"])
    return 201, {"message": "201 Created"}, {}


HOOK_ROUTES: dict[str, HookHandler] = {}
for _parent in ("projects", "groups"):
    _base = f"/{_parent}/{{id}}/hooks"
    HOOK_ROUTES |= {
        f"GET {_base}": list_hooks,
        f"POST {_base}": create_hook,
        f"GET {_base}/{{hook_id}}": get_hook,
        f"PUT {_base}/{{hook_id}}": edit_hook,
        f"POST {_base}/{{hook_id}}/test/{{trigger}}": test_hook,
    }
