"""GitHub: issue and pull-request comments, reviews, labels and assignments."""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.github.events import parse_event
from integrations.github.pulls import PULLS
from integrations.github.routes import IGNORED, ROUTES
from integrations.github.settings import GitHubSettings
from integrations.github.signin import SIGN_IN
from integrations.github.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.outbound import PullInfo
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.github import checks, preflight, provider, review
else:  # imported on first call: the web process never loads the clients
    checks = ImportedOnCall("integrations.github.checks")
    preflight = ImportedOnCall("integrations.github.preflight")
    provider = ImportedOnCall("integrations.github.provider")
    review = ImportedOnCall("integrations.github.review")


def _enabled(settings: Settings) -> bool:
    return secret_value(GitHubSettings.of(settings).webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(GitHubSettings.of(settings).webhook_secret)
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
    pulls=PULLS,
)


def _open_pulls(
    context: TaskTrigger, requester_id: int | None, repo: str, base: str, settings: Settings
) -> tuple[PullInfo, ...]:
    from integrations.github.auth import client_for_job

    return client_for_job(context, requester_id, settings).open_pulls(repo, base)


def _setup() -> ProviderSetup:
    from integrations.github.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="github",
    display_name="GitHub",
    integration=INTEGRATION,
    conversation=provider.conversation,
    forge=provider.forge,
    settings=GitHubSettings,
    secrets=("github_webhook_secret",),
    kind="issue",
    pull_word="pull request",
    co_author=provider.co_author,
    sign_in=SIGN_IN,
    setup=_setup,
    preflight=preflight.checks,
    ci_report=checks.ci_report,
    open_pulls=_open_pulls,
    resolve_thread=provider.resolve_thread,
    post_review=review.post_review,
    warm=provider.warm,
)
