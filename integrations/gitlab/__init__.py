"""GitLab: notes on issues and merge requests, and the trigger label."""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.gitlab.events import parse_event
from integrations.gitlab.routes import IGNORED, ROUTES
from integrations.gitlab.settings import GitLabSettings
from integrations.gitlab.signin import SIGN_IN
from integrations.gitlab.verify import verify_delivery
from resolver.contract.inbound import Headers, Integration, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.gitlab import preflight, provider, review
else:  # imported on first call: the web process never loads the clients
    preflight = ImportedOnCall("integrations.gitlab.preflight")
    provider = ImportedOnCall("integrations.gitlab.provider")
    review = ImportedOnCall("integrations.gitlab.review")


def _enabled(settings: Settings) -> bool:
    token = secret_value(GitLabSettings.of(settings).webhook_token)
    return token is not None or secret_value(GitLabSettings.of(settings).signing_token) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    token = secret_value(GitLabSettings.of(settings).webhook_token)
    signing = secret_value(GitLabSettings.of(settings).signing_token)
    verify_delivery(headers, body, token, signing, now)


INTEGRATION = Integration(
    name="gitlab",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _setup() -> ProviderSetup:
    from integrations.gitlab.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="gitlab",
    display_name="GitLab",
    integration=INTEGRATION,
    conversation=provider.conversation_for,
    forge=provider.forge_for,
    settings=GitLabSettings,
    secrets=("gitlab_webhook_token", "gitlab_signing_token"),
    kind="issue",
    pull_word="merge request",
    co_author=provider.co_author,
    sign_in=SIGN_IN,
    setup=_setup,
    preflight=preflight.checks,
    ci_report=provider.ci_report,
    resolve_thread=provider.resolve_thread,
    open_pulls=provider.open_pulls,
    post_review=review.post_review,
)
