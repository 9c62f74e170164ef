"""GitHub: issue and pull-request comments, reviews, labels and assignments."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from integrations.github.app_setup import APP_FROM_MANIFEST
from integrations.github.events import parse_event
from integrations.github.routes import IGNORED, ROUTES
from integrations.github.signin import SIGN_IN
from integrations.github.verify import verify_signature
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.ci import CIReport, FailedCheck
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.outbound import Conversation, Forge, ForgeUser, PullInfo
from resolver.contract.provider import Provider
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.github_webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.github_webhook_secret)
    if secret is None:
        raise SignatureError("no GitHub webhook secret configured")
    verify_signature(headers, body, secret)


INTEGRATION = Integration(
    name="github",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _conversation(context: TaskTrigger, requester_id: int | None) -> Conversation:
    from integrations.github.provider import conversation

    return conversation(context, requester_id)


def _forge(context: TaskTrigger, requester_id: int | None) -> Forge:
    from integrations.github.provider import forge

    return forge(context, requester_id)


def _co_author(user: ForgeUser) -> tuple[str, str]:
    from integrations.github.provider import co_author

    return co_author(user)


def _ci_report(context: TaskTrigger, requester_id: int | None, check: FailedCheck) -> CIReport:
    from integrations.github.checks import ci_report

    return ci_report(context, requester_id, check)


def _open_pulls(
    context: TaskTrigger, requester_id: int | None, repo: str, base: str
) -> tuple[PullInfo, ...]:
    from integrations.github.auth import client_for_job

    return client_for_job(context, requester_id).open_pulls(repo, base)


def _resolve_thread(
    context: TaskTrigger, requester_id: int | None, where: Mapping[str, JsonValue]
) -> None:
    from integrations.github.provider import resolve_thread

    resolve_thread(context, requester_id, where)


def _preflight(scope: PreflightScope) -> list[Check]:
    from integrations.github.preflight import checks

    return checks(scope)


# The reply side is imported on first use: the web process never loads the clients.
PROVIDER = Provider(
    name="github",
    display_name="GitHub",
    integration=INTEGRATION,
    conversation=_conversation,
    forge=_forge,
    secrets=("github_webhook_secret",),
    kind="issue",
    pull_word="pull request",
    co_author=_co_author,
    sign_in=SIGN_IN,
    app_from_manifest=APP_FROM_MANIFEST,
    preflight=_preflight,
    ci_report=_ci_report,
    open_pulls=_open_pulls,
    resolve_thread=_resolve_thread,
)
