"""Registering Resolver's GitLab webhook on a project or a group (group hooks need Premium), and
rotating its secrets, through python-gitlab.

The hook subscribes to exactly the events `routes.ROUTES` acts on and carries two secrets: the
`token` GitLab sends as `X-Gitlab-Token`, and a `signing_token` (`whsec_…`) GitLab uses for
Standard Webhooks signatures where the instance has them; an instance without them ignores it.
https://docs.gitlab.com/api/project_webhooks/ and https://docs.gitlab.com/api/group_webhooks/
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import requests
from gitlab.exceptions import GitlabError

from integrations.gitlab.api import ERRORS, Connection, error_detail
from integrations.gitlab.routes import ROUTES
from integrations.gitlab.settings import GitLabSettings
from integrations.toolkit.answers import SHAPE_ERRORS
from resolver.contract.setup import (
    CliOption,
    HookRequest,
    OptionValue,
    ProviderSetup,
    RegisteredHook,
    SetupError,
    WebhookSetup,
)
from resolver.core.logs import register_secret
from resolver.core.settings import Settings

# The hook flag that makes GitLab send each event key. https://docs.gitlab.com/user/project/integrations/webhook_events/
EVENT_FLAGS: Final = {
    "Note Hook": "note_events",
    "Confidential Note Hook": "confidential_note_events",
    "Issue Hook": "issues_events",
    "Confidential Issue Hook": "confidential_issues_events",
    "Merge Request Hook": "merge_requests_events",
    "Push Hook": "push_events",
    "Tag Push Hook": "tag_push_events",
    "Pipeline Hook": "pipeline_events",
    "Job Hook": "job_events",
    "Deployment Hook": "deployment_events",
    "Release Hook": "releases_events",
    "Wiki Page Hook": "wiki_page_events",
}
SUBSCRIBED: Final = tuple(sorted({EVENT_FLAGS[key] for key in ROUTES}))
"""The flags Resolver turns on: those of the events it routes, no more."""
TEST_TRIGGER: Final = "note_events"
SCOPE_HELP: Final = "project:GROUP/NAME (or a project id), or group:GROUP for a group hook"


def event_flags() -> dict[str, bool]:
    """Every flag GitLab knows, on for the routed events only (push_events is on by default)."""
    return {flag: flag in SUBSCRIBED for flag in sorted(set(EVENT_FLAGS.values()))}


def parse_scope(scope: str | None) -> tuple[str, str]:
    """`project:group/name`, `group:name` or a bare project path or id → (kind, id)."""
    if not scope or not scope.strip():
        raise SetupError(f"name where the GitLab hook goes: {SCOPE_HELP}")
    kind, sep, ident = scope.strip().partition(":")
    if not sep:
        kind, ident = "project", scope.strip()
    if kind not in ("project", "group") or not ident:
        raise SetupError(f"{scope!r} is not a GitLab hook scope: {SCOPE_HELP}")
    return kind, ident


@contextmanager
def _explained(settings: Settings, kind: str, ident: str, action: str) -> Iterator[None]:
    """python-gitlab's errors as one sentence on what to fix (no token, no headers); an answer
    to `action` of the wrong shape is GitLab's unusable answer, as toolkit/answers reads it."""
    try:
        yield
    except GitlabError as error:
        if error.response_code is None:  # python-gitlab could not read it (a page, no object)
            raise SetupError(str(ERRORS.unusable_answer(action, error))) from None
        raise SetupError(_message(kind, ident, error.response_code, error.error_message)) from None
    except requests.RequestException as error:
        reason = f"GitLab at {GitLabSettings.of(settings).url} could not be reached"
        raise SetupError(f"{reason}: {type(error).__name__}") from None
    except SHAPE_ERRORS as error:  # after requests' own, some of which are ValueErrors
        raise SetupError(str(ERRORS.unusable_answer(action, error))) from None


def _message(kind: str, ident: str, status: int | None, detail: object) -> str:
    if status == 401:
        return "GitLab refused the token (401): give a valid token with the api scope"
    if status == 403:
        role = "Owner" if kind == "group" else "Maintainer"
        where = f"{kind} {ident}"
        return f"the token may not manage webhooks of {where} (403): it needs the {role} role"
    if status == 404:
        return f"GitLab has no {kind} {ident} that this token can see (404)"
    return f"GitLab answered {status} for the {kind} {ident} hooks: {error_detail(detail)}"


def _manager(settings: Settings, request: HookRequest) -> tuple[Any, str, str]:
    kind, ident = parse_scope(request.scope)
    register_secret(request.credential)
    api = Connection(settings, request.credential).api
    parent = api.projects if kind == "project" else api.groups
    return parent.get(ident, lazy=True).hooks, kind, ident


def _attributes(request: HookRequest) -> dict[str, Any]:
    values: dict[str, Any] = {
        "url": request.url,
        "token": request.secret,
        "enable_ssl_verification": request.url.startswith("https://"),
        **event_flags(),
    }
    if request.signing_secret is not None:
        values["signing_token"] = request.signing_secret
    return values


MAX_HOOK_PAGES: Final = 10
"""The most pages of a project's or group's hooks read to find ours (a thousand hooks)."""


def _hook_at(hooks: Any, url: str) -> int | None:
    """The id of the hook at `url`, page by page up to MAX_HOOK_PAGES: counted, not led by the
    answer's `next` links, which a server could give without end."""
    for page in range(1, MAX_HOOK_PAGES + 1):
        found = hooks.list(page=page, per_page=100, get_all=False)
        match = next((hook for hook in found if hook.url == url), None)
        if match is not None:
            return int(match.id)
        if len(found) < 100:
            return None
    return None


def _ensure(settings: Settings, request: HookRequest, *, must_exist: bool) -> RegisteredHook:
    hooks, kind, ident = _manager(settings, request)
    path = f"/{kind}s/:id/hooks"
    with _explained(settings, kind, ident, f"GET {path}"):
        found = _hook_at(hooks, request.url)
    if found is None and must_exist:
        raise SetupError(f"{kind} {ident} has no hook at {request.url}: register it first")
    if found is None:
        with _explained(settings, kind, ident, f"POST {path}"):
            hook_id = int(hooks.create(_attributes(request)).id)
    else:
        with _explained(settings, kind, ident, f"PUT {path}/:hook_id"):
            hooks.update(found, _attributes(request))
        hook_id = found
    return RegisteredHook(str(hook_id), SUBSCRIBED, found is None, request.secret)


def register(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=False)


def rotate(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=True)


def test(settings: Settings, request: HookRequest, hook_id: str) -> None:
    """`POST …/hooks/:hook_id/test/note_events`: GitLab sends a sample note event now."""
    hooks, kind, ident = _manager(settings, request)
    with _explained(settings, kind, ident, f"POST /{kind}s/:id/hooks/:hook_id/test"):
        hooks.get(hook_id, lazy=True).test(TEST_TRIGGER)


def _scope_of(options: Mapping[str, OptionValue]) -> str:
    project, group = options.get("project"), options.get("group")
    if (project is None) == (group is None):
        raise SetupError("give exactly one of --project or --group")
    return f"project:{project}" if project else f"group:{group}"


SETUP: Final = ProviderSetup(
    webhook=WebhookSetup(
        register=register,
        rotate=rotate,
        secret_setting="gitlab_webhook_token",
        signing_setting="gitlab_signing_token",
        test=test,
        scope_help=SCOPE_HELP,
        help="Register the GitLab webhook (standard input: a token with Maintainer, or Owner for "
        "a group, and the api scope).",
        options=(
            CliOption("project", ("--project",), "The project (group/name or id)."),
            CliOption("group", ("--group",), "A group instead (group hooks need Premium)."),
        ),
        scope_of=_scope_of,
    )
)
