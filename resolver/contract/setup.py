"""Setting up a provider from Resolver itself: what a provider offers `/setup` and `resolver
setup`, described once on its `Provider`. The provider does the HTTP; `resolver.onboarding`
decides and stores. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from resolver.core.settings import Settings


class SetupError(Exception):
    """A setup step failed; the message says what happened and what to do (never a secret)."""


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
    manifest: Callable[[str, ManifestUrls], dict[str, Any]]
    new_app_url: Callable[[Settings, str | None, str], str]
    """Where the browser POSTs the manifest: settings, organisation (None: personal), state."""
    convert: Callable[[Settings, str], CreatedApp]
    """Claims the app with the code the provider sent back; SetupError when it cannot."""
    set_webhook_secret: Callable[[Settings, str], None]
    """Tells the provider the app's new webhook secret, as the app itself."""
