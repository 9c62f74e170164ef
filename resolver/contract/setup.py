"""Setting up a provider from Resolver itself, described once by the provider
(`integrations/<name>/setup.py`) and rendered by generic code:

- `/setup` shows its `SetupSection` (what is configured, and its forms) and mounts its
  `WebAction`s at `/setup/<name>/<action>`;
- `resolver setup <name>` is its `SetupCommand`, a command built from its options;
- `resolver doctor` adds its `config_checks`, and its preflight (`Provider.preflight`).

Its app is created from a manifest (GitHub, Slack) or its webhook registered there (GitLab,
Jira, Linear). The provider does the HTTP; what it creates is kept through a `SetupStore`,
which `resolver.onboarding` implements over the vault. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from pydantic import JsonValue

from resolver.contract.checks import Check
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


OptionValue = str | bool | int | float | None


@dataclass(frozen=True)
class CliOption:
    """An option of `resolver setup <name>`."""

    name: str
    flags: tuple[str, ...]
    help: str
    default: OptionValue = None
    kind: Literal["text", "flag", "int", "float"] = "text"


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
    help: str = ""
    """What `resolver setup <name>` does, and the admin token it reads from standard input."""
    options: tuple[CliOption, ...] = ()
    """The options of `resolver setup <name>` that say where the hook lives."""
    scope_of: Callable[[Mapping[str, OptionValue]], str | None] = lambda _options: None
    """Those options → the request's `scope`; SetupError when they do not make one."""


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
class KeptToken:
    """A bot token an install gave, kept as that installation's credential."""

    provider: str
    installation: str
    """Its external id (a Slack team)."""
    kind: str
    secret: str
    scope: str | None = None
    expires_at: datetime | None = None
    refresh: str | None = None

    def __repr__(self) -> str:
        return f"KeptToken(provider={self.provider!r}, installation={self.installation!r})"


@dataclass(frozen=True)
class KeptSetting:
    """A setting as the vault keeps it, and when it was stored."""

    value: str
    at: datetime

    def __repr__(self) -> str:
        return f"KeptSetting(at={self.at!r})"


class SetupStore(Protocol):
    """Where set-up keeps what it creates: settings in the vault, tokens as credentials."""

    def env_set(self, names: Iterable[str]) -> tuple[str, ...]:
        """Which of `names` the environment sets: those win over the vault."""
        ...

    def check_not_in_environment(self, names: Iterable[str]) -> None:
        """SetupError when the environment sets one of `names` (storing it would change
        nothing)."""
        ...

    def save(self, values: Mapping[str, str]) -> None:
        """Keep settings (name -> value) in the vault, encrypted; every process reads them."""
        ...

    def keep_token(self, token: KeptToken) -> None: ...

    def kept(self, name: str) -> KeptSetting | None:
        """The vault's value of setting `name` and when it was stored (not the environment's)."""
        ...

    def token_kept_at(self, provider: str, kind: str) -> datetime | None:
        """When an install last kept a token of `kind` for one of `provider`'s installations."""
        ...

    def held(self, name: str) -> AbstractContextManager[SetupStore]:
        """This store, whose calls share one transaction that holds `name` until it ends: of
        two actions on one thing at once (a button pressed twice), the second waits for the
        first's end and reads what it kept."""
        ...


@dataclass(frozen=True)
class Flash:
    """Back to /setup, with a line saying what happened (never a secret)."""

    message: str


@dataclass(frozen=True)
class GoTo:
    """On to another page (the provider's, to approve or install something)."""

    url: str


@dataclass(frozen=True)
class ShowPage:
    """A page of the provider's own (a file in `ProviderSetup.templates`), given `values`."""

    template: str
    values: Mapping[str, object]


Answer = Flash | GoTo | ShowPage


@dataclass(frozen=True)
class ActionInput:
    """What an action on /setup is given: the form's text fields (or the query's, for a GET),
    and the admin's web session, where an action keeps what the next one checks."""

    settings: Settings
    store: SetupStore
    values: Mapping[str, str]
    session: MutableMapping[str, object]
    now: float
    by: str
    """Who pressed it, for the log."""


@dataclass(frozen=True)
class WebAction:
    """`/setup/<provider>/<name>`: admins only, a POST with the session's CSRF token or a GET
    (a provider sending the admin back). A SetupError it raises is the flash
    "<error>. Nothing was changed."."""

    name: str
    method: Literal["GET", "POST"]
    run: Callable[[ActionInput], Answer]
    hidden: bool = False
    """Answer others as if the page did not exist (404), rather than 403."""


@dataclass(frozen=True)
class SectionInput:
    """What a section's values are made from; an action keeps in the session what it shows."""

    settings: Settings
    session: MutableMapping[str, object]


@dataclass(frozen=True)
class SetupSection:
    """A provider's part of /setup: the settings it shows the origin of (never a value), when
    it counts as configured, and its template (a file in `ProviderSetup.templates`; none: where
    to point the webhook) with the values it needs (the template reads them as `p.values`)."""

    fields: tuple[str, ...]
    required: tuple[str, ...] = ()
    """All of these set: configured (none given: any of `fields`)."""
    template: str = ""
    values: Callable[[SectionInput], Mapping[str, object]] | None = None


class SetupConsole(Protocol):
    """The operator's terminal."""

    def say(self, text: str) -> None:
        """A line to the operator (never a secret)."""
        ...

    def read_lines(self, what: str) -> list[str]:
        """Standard input's non-empty lines (tokens are never given on the command line);
        SetupError when there are none."""
        ...


@dataclass(frozen=True)
class CommandInput:
    settings: Settings
    store: SetupStore
    options: Mapping[str, OptionValue]
    console: SetupConsole


@dataclass(frozen=True)
class SetupCommand:
    """`resolver setup <name>`: its help, its options, and what it does (SetupError: the
    command prints it and exits 1)."""

    help: str
    options: tuple[CliOption, ...]
    run: Callable[[CommandInput], None]


@dataclass(frozen=True)
class ProviderSetup:
    """What `/setup`, `resolver setup <name>` and `resolver doctor` show and do for a
    provider."""

    webhook: WebhookSetup | None = None
    """How Resolver registers its webhook; the webhook's form, actions and command follow."""
    section: SetupSection | None = None
    """Its part of /setup; None: the webhook form when `webhook` is set, else the settings."""
    actions: tuple[WebAction, ...] = ()
    templates: Path | None = None
    """The folder of its own templates (the web app names them `<provider>/<file>`)."""
    form_targets: Callable[[Settings], tuple[str, ...]] = lambda _settings: ()
    """The sites its forms send the browser to (the pages' `form-action`)."""
    command: SetupCommand | None = None
    """`resolver setup <name>`; None: the webhook's, where it has one."""
    config_checks: Callable[[Settings], list[Check]] | None = None
    """Its settings, checked without the network (`resolver doctor`)."""
