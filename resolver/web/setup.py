"""`/setup`, for admins: each installed provider, whether it is configured and from where
(the environment, which wins, or the vault; never a value), and what to do next.

The page is a list of sections, one per provider, each the template its `ProviderSetup` names
(`onboarding.described`), fed the same values; its buttons are the provider's actions
(`web.setup_providers`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from integrations import registry
from resolver.contract.checks import Check
from resolver.contract.provider import Provider
from resolver.contract.setup import SectionInput, SetupSection
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.onboarding.described import section_of, setup_of
from resolver.onboarding.preflight import provider_checks
from resolver.onboarding.status import SettingOrigin, origins
from resolver.web.access import Viewer
from resolver.web.actions import checked_viewer
from resolver.web.context import current_viewer, in_transaction, not_found, page, to_signin, web_of
from resolver.web.guard import origin

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def form_targets(settings: Settings) -> list[str]:
    """The sites /setup's forms send the browser to, for its CSP's `form-action`: a manifest
    form posts the new app to its provider, and creating a chat app redirects to its install
    page (a browser holds the redirect after a form post to the same rule)."""
    found = []
    for provider in registry.installed():
        setup = setup_of(provider)
        if setup is not None:
            found += [origin(url) for url in setup.form_targets(settings)]
    return found


@dataclass(frozen=True)
class ProviderStatus:
    provider: Provider
    section: SetupSection
    template: str
    settings: list[SettingOrigin]
    values: Mapping[str, object]
    """What its own template needs besides these."""

    @property
    def scope_help(self) -> str:
        """Where a webhook may be registered on this provider, in its words."""
        setup = setup_of(self.provider)
        return setup.webhook.scope_help if setup is not None and setup.webhook else ""

    @property
    def configured(self) -> bool:
        where = {item.name: item.origin for item in self.settings}
        if self.section.required:
            return all(where.get(name) for name in self.section.required)
        return any(where.values())


def statuses(
    db: Session, settings: Settings, session: MutableMapping[str, object]
) -> list[ProviderStatus]:
    found = []
    for provider in registry.installed():
        shown = section_of(provider)
        kept = origins(db, shown.section.fields)
        values: Mapping[str, object] = {}
        if shown.section.values is not None:
            values = shown.section.values(SectionInput(settings, session))
        found.append(ProviderStatus(provider, shown.section, shown.template, kept, values))
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


async def setup_page(request: Request) -> Response:
    viewer = await _admin(request)
    if isinstance(viewer, Response):
        return viewer
    settings = web_of(request).settings
    return page(
        request,
        "setup.html",
        viewer,
        providers=await in_transaction(statuses, settings, request.session),
        public=settings.public_url.rstrip("/"),
    )


async def checks(request: Request) -> Response:
    """`POST /setup/checks`: the preflight, run now (it calls each provider, so it is a button
    rather than part of every page load), shown as `resolver doctor` prints it."""
    viewer = await _admin_post(request)
    if isinstance(viewer, Response):
        return viewer
    found = await run_in_threadpool(provider_checks, web_of(request).settings)
    log(logger, logging.INFO, "setup.preflight", by=viewer.label, failed=_failed(found))
    return page(request, "setup/checks.html", viewer, checks=found, failed=_failed(found))


def _failed(found: list[Check]) -> int:
    return sum(1 for check in found if check.status == "fail")
