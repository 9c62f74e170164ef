"""GitLab: notes on issues and merge requests, and the trigger label."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from integrations.gitlab.events import parse_event
from integrations.gitlab.routes import IGNORED, ROUTES
from integrations.gitlab.signin import SIGN_IN
from integrations.gitlab.verify import verify_delivery
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.ci import CIReport, FailedCheck
from resolver.contract.inbound import Headers, Integration, secret_value
from resolver.contract.outbound import Conversation, Forge, ForgeUser, PullInfo
from resolver.contract.provider import Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    token = secret_value(settings.gitlab_webhook_token)
    return token is not None or secret_value(settings.gitlab_signing_token) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    token = secret_value(settings.gitlab_webhook_token)
    signing = secret_value(settings.gitlab_signing_token)
    verify_delivery(headers, body, token, signing, now)


INTEGRATION = Integration(
    name="gitlab",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _conversation(context: TaskTrigger, requester_id: int | None) -> Conversation:
    from integrations.gitlab.provider import conversation_for

    return conversation_for(context, requester_id)


def _forge(context: TaskTrigger, requester_id: int | None) -> Forge:
    from integrations.gitlab.provider import forge_for

    return forge_for(context, requester_id)


def _co_author(user: ForgeUser) -> tuple[str, str]:
    from integrations.gitlab.provider import co_author

    return co_author(user)


def _setup() -> ProviderSetup:
    from integrations.gitlab.hooks import SETUP

    return SETUP


def _preflight(scope: PreflightScope) -> list[Check]:
    from integrations.gitlab.preflight import checks

    return checks(scope)


# The reply side is imported on first use: the web process never loads the clients.
def _ci_report(context: TaskTrigger, requester_id: int | None, check: FailedCheck) -> CIReport:
    from integrations.gitlab.provider import ci_report

    return ci_report(context, requester_id, check)


def _resolve_thread(
    context: TaskTrigger, requester_id: int | None, where: Mapping[str, JsonValue]
) -> None:
    from integrations.gitlab.provider import resolve_thread

    resolve_thread(context, requester_id, where)


def _open_pulls(
    context: TaskTrigger, requester_id: int | None, repo: str, base: str
) -> tuple[PullInfo, ...]:
    from integrations.gitlab.provider import open_pulls

    return open_pulls(context, requester_id, repo, base)


PROVIDER = Provider(
    name="gitlab",
    display_name="GitLab",
    integration=INTEGRATION,
    conversation=_conversation,
    forge=_forge,
    secrets=("gitlab_webhook_token", "gitlab_signing_token"),
    kind="issue",
    pull_word="merge request",
    co_author=_co_author,
    sign_in=SIGN_IN,
    setup=_setup,
    preflight=_preflight,
    ci_report=_ci_report,
    resolve_thread=_resolve_thread,
    open_pulls=_open_pulls,
)
