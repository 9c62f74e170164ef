"""`/setup`, for admins: each installed provider, whether it is configured and from where
(the environment, which wins, or the vault; never a value), and what to do next. GitHub's
section creates the App from a manifest and rotates its webhook secret.

The page is a list of sections, one per provider, each a template fed the same values
(`SECTIONS`); a provider without its own section gets the plain one. A section's buttons are
POSTs with the CSRF token that redirect back here with a flash."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from integrations.github import setup as github
from resolver.contract.checks import Check
from resolver.contract.provider import Provider
from resolver.contract.setup import SetupError
from resolver.core.logs import log
from resolver.core.settings import Settings, get_settings
from resolver.onboarding.preflight import provider_checks
from resolver.onboarding.status import SettingOrigin, origins
from resolver.store import configured
from resolver.store.db import session_scope
from resolver.web.access import Viewer
from resolver.web.actions import checked_viewer
from resolver.web.context import current_viewer, not_found, page, to_signin
from resolver.web.guard import origin

logger = logging.getLogger(__name__)

PENDING: Final = "setup_github"  # the session key of a manifest sent to GitHub
CREATED: Final = "setup_github_created"


@dataclass(frozen=True)
class Section:
    """One provider's part of /setup: its template, and the settings it shows the origin of."""

    template: str
    fields: tuple[str, ...]
    required: tuple[str, ...]
    """All of these set: configured."""


def _github_section() -> Section:
    fields = github.flow().fields
    return Section(
        "setup/_github.html",
        (*fields, "github_app_private_key_path"),
        ("github_app_id", "github_webhook_secret"),
    )


def _slack_section() -> Section:
    fields = ("slack_signing_secret", "slack_app_id", "slack_client_id", "slack_client_secret")
    return Section("setup/_slack.html", fields, ("slack_signing_secret",))


def _hook_section(name: str) -> Callable[[], Section]:
    def make() -> Section:
        provider = registry.find(name)
        assert provider is not None
        return Section("setup/_hook.html", provider.secrets, provider.secrets[:1])

    return make


SECTIONS: Final = {
    "github": _github_section,
    "slack": _slack_section,
    "gitlab": _hook_section("gitlab"),
    "jira": _hook_section("jira"),
    "linear": _hook_section("linear"),
}
"""Provider name -> its section."""


def form_targets(settings: Settings) -> list[str]:
    """The sites /setup's forms send the browser to, for its CSP's `form-action`: a manifest
    form posts the new app to its provider, and creating a chat app redirects to its install
    page (a browser holds the redirect after a form post to the same rule)."""
    found = []
    for provider in registry.installed():
        if provider.app_from_manifest is not None:
            found.append(origin(provider.app_from_manifest.new_app_url(settings, None, "")))
        chat = provider.setup().app if provider.setup is not None else None
        if chat is not None:
            found.append(origin(chat.authorize_url(settings, "", "", "")))
    return found


def _plain_section(provider: Provider) -> Section:
    return Section("setup/_provider.html", provider.secrets, ())


@dataclass(frozen=True)
class ProviderStatus:
    provider: Provider
    section: Section
    settings: list[SettingOrigin]

    @property
    def scope_help(self) -> str:
        """Where a webhook may be registered on this provider, in its words."""
        setup = self.provider.setup() if self.provider.setup is not None else None
        return setup.webhook.scope_help if setup is not None and setup.webhook else ""

    @property
    def configured(self) -> bool:
        where = {item.name: item.origin for item in self.settings}
        if self.section.required:
            return all(where.get(name) for name in self.section.required)
        return any(where.values())


def statuses() -> list[ProviderStatus]:
    found = []
    with session_scope() as session:
        for provider in registry.installed():
            make = SECTIONS.get(provider.name)
            section = make() if make else _plain_section(provider)
            found.append(ProviderStatus(provider, section, origins(session, section.fields)))
    return found


async def _admin(request: Request) -> Viewer | Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    return viewer if viewer.admin else not_found(request, viewer)


async def _admin_post(request: Request) -> Viewer | Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    return checked if checked.admin else not_found(request, checked)


def _back(request: Request, message: str) -> Response:
    request.session["flash"] = message
    return RedirectResponse("/setup", status_code=303)


async def setup_page(request: Request) -> Response:
    viewer = await _admin(request)
    if isinstance(viewer, Response):
        return viewer
    settings = get_settings()
    return page(
        request,
        "setup.html",
        viewer,
        providers=await run_in_threadpool(statuses),
        created=request.session.pop(CREATED, None),
        default_name=github.flow().default_name(settings),
        urls=github.urls(settings),
    )


async def github_manifest(request: Request) -> Response:
    """The admin pressed "Create GitHub App": a page that POSTs the manifest to GitHub."""
    viewer = await _admin_post(request)
    if isinstance(viewer, Response):
        return viewer
    form = await request.form()
    organisation = str(form.get("organisation") or "") if form.get("owner") == "org" else ""
    if form.get("owner") == "org" and not organisation.strip():
        return _back(request, "Name the organisation that will own the App.")
    try:
        started = github.start(get_settings(), organisation, str(form.get("name") or ""))
    except SetupError as error:
        return _back(request, f"{error}; nothing was sent to GitHub.")
    request.session[PENDING] = github.pending(started.state, time.time())
    log(logger, logging.INFO, "setup.github_manifest_sent", by=viewer.label)
    return page(request, "setup/github_go.html", viewer, started=started)


async def github_done(request: Request) -> Response:
    """GitHub sent the admin back with a code: claim the App and keep it in the vault."""
    viewer = await _admin(request)
    if isinstance(viewer, Response):
        return viewer
    kept = request.session.pop(PENDING, None)
    if not github.state_ok(kept, request.query_params.get("state"), time.time()):
        log(logger, logging.WARNING, "setup.github_state_refused", by=viewer.label)
        return _back(
            request,
            "GitHub's answer does not belong to a Create GitHub App started in this browser "
            "within the hour; nothing was stored. Start again below.",
        )
    try:
        finished = await run_in_threadpool(_finish, request.query_params.get("code", ""))
    except SetupError as error:
        return _back(request, f"{error} Nothing was stored.")
    app = finished.app
    request.session[CREATED] = {
        "slug": app.slug,
        "html_url": app.html_url,
        "install_url": app.install_url,
        "owner": app.owner,
    }
    log(logger, logging.INFO, "setup.github_app_created", slug=app.slug, by=viewer.label)
    return _back(request, _created_message(finished))


def _finish(code: str) -> github.Finished:
    with session_scope() as session:
        finished = github.finish(session, get_settings(), code)
    configured.changed()
    return finished


def _created_message(finished: github.Finished) -> str:
    text = (
        f"Created the GitHub App {finished.app.slug}; its id, key and secrets are in the "
        "vault. Install it on the repositories the bot may work on."
    )
    if finished.env_wins:
        names = ", ".join(f"RESOLVER_{name.upper()}" for name in finished.env_wins)
        text += f" The environment still sets {names}, and its values win over the stored ones."
    return text


async def github_rotate(request: Request) -> Response:
    viewer = await _admin_post(request)
    if isinstance(viewer, Response):
        return viewer

    def rotate() -> None:
        with session_scope() as session:
            github.rotate_webhook_secret(session, get_settings())
        configured.changed()

    try:
        await run_in_threadpool(rotate)
    except SetupError as error:
        return _back(request, f"The webhook secret was not changed: {error}.")
    log(logger, logging.INFO, "setup.github_secret_rotated", by=viewer.label)
    return _back(
        request,
        "The GitHub webhook secret was changed at GitHub and in the vault; deliveries signed "
        "with the old one are refused from now on.",
    )


async def checks(request: Request) -> Response:
    """`POST /setup/checks`: the preflight, run now (it calls each provider, so it is a button
    rather than part of every page load), shown as `resolver doctor` prints it."""
    viewer = await _admin_post(request)
    if isinstance(viewer, Response):
        return viewer
    found = await run_in_threadpool(provider_checks, get_settings())
    log(logger, logging.INFO, "setup.preflight", by=viewer.label, failed=_failed(found))
    return page(request, "setup/checks.html", viewer, checks=found, failed=_failed(found))


def _failed(found: list[Check]) -> int:
    return sum(1 for check in found if check.status == "fail")
