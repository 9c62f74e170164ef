"""Bitbucket Cloud: pull request comments, new pull requests, requested changes, pushes and
failed builds (Bitbucket Data Center's webhooks are verified, parsed and refused).

The webhook side (`verify`, `events`, `routes`, and Bitbucket's part of a trigger, `trigger`),
the REST 2.0 client (`client`), the conversation and the forge built on it (`provider`), the
job's token (`tokens`), the settings, sign-in, set-up and preflight, and the stand-in for tests
(`standin/`). Bitbucket has no reactions: the status comment, posted at intake, is the
acknowledgement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.bitbucket.events import parse_event
from integrations.bitbucket.routes import IGNORED, ROUTES
from integrations.bitbucket.settings import BitbucketSettings
from integrations.bitbucket.signin import SIGN_IN
from integrations.bitbucket.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.bitbucket import pipelines, preflight, provider, review
else:  # imported on first call: the web process never loads the clients
    pipelines = ImportedOnCall("integrations.bitbucket.pipelines")
    preflight = ImportedOnCall("integrations.bitbucket.preflight")
    provider = ImportedOnCall("integrations.bitbucket.provider")
    review = ImportedOnCall("integrations.bitbucket.review")


def _enabled(settings: Settings) -> bool:
    return BitbucketSettings.of(settings).webhook_enabled


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    config = BitbucketSettings.of(settings)
    secret = secret_value(config.webhook_secret)
    verify_signature(headers, body, secret, unsigned=config.allow_unsigned)


INTEGRATION = Integration(
    name="bitbucket",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _setup() -> ProviderSetup:
    from integrations.bitbucket.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="bitbucket",
    display_name="Bitbucket",
    integration=INTEGRATION,
    conversation=provider.conversation,
    forge=provider.forge,
    settings=BitbucketSettings,
    secrets=("bitbucket_webhook_secret",),
    kind="issue",
    pull_word="pull request",
    sign_in=SIGN_IN,
    setup=_setup,
    preflight=preflight.checks,
    post_review=review.post_review,
    ci_report=pipelines.ci_report,
    open_pulls=provider.open_pulls,
)
