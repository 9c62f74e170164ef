"""Setting up a provider from Resolver itself: what a provider offers `/setup` and `resolver
setup`, described once on its `Provider`: its app created from a manifest (GitHub, Slack) or
its webhook registered there (GitLab, Jira, Linear). The provider does the HTTP;
`resolver.onboarding` generates the secrets, decides and stores. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from resolver.core.settings import Settings


class SetupError(Exception):
    """A setup step failed; the message says what happened and what to do (never a secret)."""


def pasted_token(value: str, what: str) -> str:
    """A token an admin pasted, stripped; SetupError unless it is printable ASCII without
    spaces, as every provider's tokens are (an HTTP header carries nothing else)."""
    token = value.strip()
    if not token:
        raise SetupError(f"give {what}")
    if not token.isascii() or not token.isprintable() or " " in token:
        raise SetupError(f"that is not {what}: a token is letters, digits and punctuation")
    return token


@dataclass(frozen=True)
class ManifestUrls:
    """Where the provider sends events, people after creating the app, and people signing in."""

    home: str
    webhook: str
    redirect: str
    sign_in_callback: str


@dataclass(frozen=True)
class CreatedApp:
    """An app the provider created from a manifest: what to show, and the settings to keep
    (setting name -> value) in the vault."""

    slug: str
    html_url: str
    owner: str
    install_url: str
    values: Mapping[str, str]

    def __repr__(self) -> str:
        return f"CreatedApp(slug={self.slug!r}, owner={self.owner!r}, values=<hidden>)"


@dataclass(frozen=True)
class AppFromManifest:
    """An app registered in the browser from a manifest and claimed with a one-time code
    (GitHub's manifest flow)."""

    fields: tuple[str, ...]
    """The settings the created app fills, in the order /setup lists them."""
    webhook_secret_field: str
    check_owner: Callable[[str], str]
    """An account or organisation name, checked: the name, or SetupError."""
    check_name: Callable[[str], str]
    default_name: Callable[[Settings], str]
    manifest: Callable[[str, ManifestUrls], dict[str, JsonValue]]
    new_app_url: Callable[[Settings, str | None, str], str]
    """Where the browser POSTs the manifest: settings, organisation (None: personal), state."""
    convert: Callable[[Settings, str], CreatedApp]
    """Claims the app with the code the provider sent back; SetupError when it cannot."""
    set_webhook_secret: Callable[[Settings, str], None]
    """Tells the provider the app's new webhook secret, as the app itself."""


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
class ChatApp:
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

    create: Callable[[Settings, str, str | None, str], ChatApp]
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
