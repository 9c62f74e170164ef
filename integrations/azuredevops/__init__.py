"""Azure DevOps: Azure Repos (pull request threads, labels, pushes) and Azure Boards (work
item comments, tags and assignments), on Azure DevOps Services or Server.

The webhook side (`verify`, `events`, `routes`, and its part of a trigger, `trigger`), the
REST 7.1 client (`client`), the conversation and the forge built on it (`provider`), the job's
token (`tokens`), the settings, sign-in (Microsoft Entra ID), set-up and preflight, and the
stand-in for tests (`standin/`). A work item routes to a repository like a tracker's ticket
(`route_scope`: its project).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.azuredevops.events import parse_event
from integrations.azuredevops.routes import IGNORED, ROUTES
from integrations.azuredevops.settings import AzureDevOpsSettings
from integrations.azuredevops.signin import SIGN_IN
from integrations.azuredevops.verify import verify_delivery
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger, TrackerTicket
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.azuredevops import preflight, provider, review
else:  # imported on first call: the web process never loads the clients
    preflight = ImportedOnCall("integrations.azuredevops.preflight")
    provider = ImportedOnCall("integrations.azuredevops.provider")
    review = ImportedOnCall("integrations.azuredevops.review")


def _enabled(settings: Settings) -> bool:
    return AzureDevOpsSettings.of(settings).webhook_enabled


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    config = AzureDevOpsSettings.of(settings)
    password = secret_value(config.webhook_password)
    header = secret_value(config.webhook_header_secret)
    if password is None or header is None:
        raise SignatureError("no Azure DevOps service-hook password and secret header configured")
    verify_delivery(headers, config.webhook_user, password, header)


INTEGRATION = Integration(
    name="azuredevops",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A work item's default repository is set per project (its name); a pull request names
    its own."""
    project = trigger.part.get("project") if isinstance(trigger, TrackerTicket) else None
    return project if isinstance(project, str) and project else None


def _setup() -> ProviderSetup:
    from integrations.azuredevops.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="azuredevops",
    display_name="Azure DevOps",
    integration=INTEGRATION,
    conversation=provider.conversation,
    forge=provider.forge,
    settings=AzureDevOpsSettings,
    secrets=("azuredevops_webhook_password", "azuredevops_webhook_header_secret"),
    kind="issue",
    route_scope=_route_scope,
    pull_word="pull request",
    co_author=provider.co_author,
    open_pulls=provider.open_pulls,
    ci_report=provider.ci_report,
    resolve_thread=provider.resolve_thread,
    sign_in=SIGN_IN,
    setup=_setup,
    preflight=preflight.checks,
    post_review=review.post_review,
)
