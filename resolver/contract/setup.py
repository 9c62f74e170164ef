"""How Resolver sets a provider up from `/setup` and `resolver setup`: it registers its own
webhook there (GitLab, Jira, Linear) or creates and installs its app (Slack). Each provider that
can describes it once (`Provider.setup`); `resolver.onboarding` generates the secrets, drives
these calls and stores what they return. Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from resolver.core.settings import Settings


class SetupError(Exception):
    """The provider refused or could not do the set-up; the message says what to fix and never
    holds a secret. Nothing was stored."""


@dataclass(frozen=True)
class HookRequest:
    """The webhook Resolver wants: where it points, the secrets it carries, where it lives."""

    url: str
    secret: str
    """The shared secret (GitLab's token, Jira's and Linear's signing secret)."""
    credential: str
    """The admin's token on the provider, used for this one call."""
    scope: str | None = None
    """Where the hook lives: a GitLab `project:ID`/`group:ID`, a Jira project key, a Linear
    team id; None for the whole site or organisation where the provider allows it."""
    signing_secret: str | None = None
    """A second, signing secret where the provider takes one (GitLab's `whsec_…`)."""


@dataclass(frozen=True)
class RegisteredHook:
    """What the provider now delivers, and with which secret it signs."""

    hook_id: str
    events: tuple[str, ...]
    created: bool
    """False when a hook at the same URL was there already and was updated instead."""
    secret: str
    """The secret deliveries carry: the one asked for, or the one the provider chose."""


HookCall = Callable[[Settings, HookRequest], RegisteredHook]


@dataclass(frozen=True)
class WebhookSetup:
    """Registering Resolver's webhook on a provider, and rotating its secret."""

    register: HookCall
    """Create the hook, or update the one already at `url` (the secrets are replaced)."""
    rotate: HookCall
    """Update the hook at `url` with new secrets; SetupError when there is none."""
    secret_setting: str
    """The setting the secret goes to (what the provider's `verify` reads)."""
    signing_setting: str | None = None
    """The setting a signing secret goes to, where the provider takes one."""
    test: Callable[[Settings, HookRequest, str], None] | None = None
    """Ask the provider to send a test delivery of hook `hook_id` now, where it can."""
    scope_help: str = ""
    """What `scope` means for this provider, for the CLI and the page."""


@dataclass(frozen=True)
class CreatedApp:
    """A chat app made from a manifest: its id and its credentials."""

    app_id: str
    client_id: str
    client_secret: str
    signing_secret: str
    config_token: str | None = None
    """A newer configuration token, when the one given had expired and was rotated."""
    refresh_token: str | None = None


@dataclass(frozen=True)
class Installation:
    """A workspace's installation of the app: its bot token and whom it belongs to."""

    team_id: str
    bot_token: str
    bot_user_id: str | None
    scopes: tuple[str, ...]
    refresh_token: str | None = None
    expires_in: int | None = None


@dataclass(frozen=True)
class AppSetup:
    """Creating a chat app from a manifest, and installing it with OAuth 2.0."""

    create: Callable[[Settings, str, str | None, str], CreatedApp]
    """(settings, configuration token, its refresh token, public URL) → the new app."""
    authorize_url: Callable[[Settings, str, str, str], str]
    """(settings, client id, redirect URI, state) → where the admin approves the install."""
    install: Callable[[Settings, str, str, str, str], Installation]
    """(settings, client id, client secret, code, redirect URI) → the bot token."""
    redirect_path: str
    """Where the provider sends the admin back after the install (below the public URL)."""


@dataclass(frozen=True)
class ProviderSetup:
    """What `/setup` can do for a provider."""

    webhook: WebhookSetup | None = None
    app: AppSetup | None = None
