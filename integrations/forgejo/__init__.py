"""Forgejo and Gitea: issue and pull-request comments, reviews, labels, assignments and pushes.

The webhook side (`verify`, `events`, `routes`, and Forgejo's part of a trigger, `trigger`),
the REST client (`client`), the conversation and the forge built on it (`provider`), the job's
token (`tokens`), the settings, sign-in, set-up and preflight, and the stand-in for tests
(`standin/`). Forgejo has no API to resolve a
review thread and no CI of its own that Resolver reads, so those stay unset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.forgejo.events import parse_event
from integrations.forgejo.routes import IGNORED, ROUTES
from integrations.forgejo.settings import ForgejoSettings
from integrations.forgejo.signin import SIGN_IN
from integrations.forgejo.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.forgejo import preflight, provider, review
else:  # imported on first call: the web process never loads the clients
    preflight = ImportedOnCall("integrations.forgejo.preflight")
    provider = ImportedOnCall("integrations.forgejo.provider")
    review = ImportedOnCall("integrations.forgejo.review")


def _enabled(settings: Settings) -> bool:
    return ForgejoSettings.of(settings).webhook_enabled


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(ForgejoSettings.of(settings).webhook_secret)
    if secret is None:
        raise SignatureError("no Forgejo webhook secret configured")
    verify_signature(headers, body, secret)


INTEGRATION = Integration(
    name="forgejo",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _setup() -> ProviderSetup:
    from integrations.forgejo.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="forgejo",
    display_name="Forgejo",
    integration=INTEGRATION,
    conversation=provider.conversation,
    forge=provider.forge,
    settings=ForgejoSettings,
    secrets=("forgejo_webhook_secret",),
    kind="issue",
    pull_word="pull request",
    co_author=provider.co_author,
    sign_in=SIGN_IN,
    setup=_setup,
    preflight=preflight.checks,
    open_pulls=provider.open_pulls,
    post_review=review.post_review,
)
