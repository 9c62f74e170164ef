"""The installed providers, each named once. Adding a provider is a folder under
`integrations/` and one line in `INSTALLED`; nothing else in Resolver names a provider.

Only this module imports a provider package; the rest of Resolver asks it by name (a job's
`source`, a linked identity's provider) and reads the descriptor (`contract.provider`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from integrations.azuredevops import PROVIDER as AZUREDEVOPS
from integrations.bitbucket import PROVIDER as BITBUCKET
from integrations.forgejo import PROVIDER as FORGEJO
from integrations.github import PROVIDER as GITHUB
from integrations.gitlab import PROVIDER as GITLAB
from integrations.jira import PROVIDER as JIRA
from integrations.linear import PROVIDER as LINEAR
from integrations.slack import PROVIDER as SLACK
from resolver.contract.errors import PermanentCallbackError, RouteError
from resolver.contract.outbound import Conversation, Forge
from resolver.contract.provider import Provider
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import ProviderSettings, Settings, compose

INSTALLED: Final[tuple[Provider, ...]] = (
    GITHUB,
    GITLAB,
    SLACK,
    JIRA,
    LINEAR,
    FORGEJO,
    BITBUCKET,
    AZUREDEVOPS,
)


def warm() -> None:
    """Load every installed provider's client side now (`Provider.warm`)."""
    for provider in INSTALLED:
        if provider.warm is not None:
            provider.warm()


def installed() -> tuple[Provider, ...]:
    """Every installed provider, in the order routes and checks list them."""
    return INSTALLED


def settings_classes() -> tuple[type[ProviderSettings], ...]:
    """Each installed provider's settings class: what a composition root composes into the
    service's settings (`get_settings.compose(registry.settings_classes)`)."""
    return tuple(item.settings for item in installed())


def settings(values: Mapping[str, Any] | None = None, *, env_file: bool = True) -> Settings:
    """The service's settings with every installed provider's section, `values` (by flat
    name, `github_api_url`) over the environment: for callers that build settings themselves."""
    return compose(settings_classes(), values, env_file=env_file)


def names() -> tuple[str, ...]:
    return tuple(item.name for item in installed())


def find(name: str) -> Provider | None:
    return next((item for item in installed() if item.name == name), None)


def get(name: str) -> Provider:
    """The installed provider, or a permanent error naming what is missing."""
    found = find(name)
    if found is None:
        raise PermanentCallbackError(f"no provider named {name!r} is installed")
    return found


def forge_names() -> tuple[str, ...]:
    return tuple(item.name for item in installed() if item.is_forge)


def routed_names() -> tuple[str, ...]:
    """The providers whose conversations take a default repository (not forges)."""
    return tuple(item.name for item in installed() if item.route_scope is not None)


def conversation(
    name: str, trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> Conversation:
    return get(name).conversation(trigger, requester_id, settings)


def forge(name: str, trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> Forge:
    factory = get(name).forge
    if factory is None:
        raise PermanentCallbackError(f"{name} does not host repositories")
    return factory(trigger, requester_id, settings)


def parse_repo_spec(spec: str, default: str | None = None) -> tuple[str, str]:
    """`forge:owner/name`, or `owner/name` on `default` (a forge that also carries tickets
    names its own repositories bare) or else the first installed forge → (forge, name)."""
    forges = forge_names()
    forge, sep, name = spec.strip().partition(":")
    if not sep:
        fallback = default if default in forges else (forges[0] if forges else "")
        forge, name = fallback or "", spec.strip()
    parts = name.split("/")
    if forge not in forges or len(parts) < 2 or not all(parts):
        prefixed = " or ".join(f"{item}:owner/name" for item in forges)
        raise RouteError(f"{spec!r} is not a repository: write owner/name or {prefixed}")
    return forge, name


def check_route(provider: str, repo: str) -> tuple[str, str]:
    """A default route's provider and repository, checked: (forge, name), or RouteError. A
    provider that is a forge too routes a bare `owner/name` to itself."""
    routed = routed_names()
    if provider not in routed:
        raise RouteError(f"routes are for {', '.join(routed)}, not {provider!r}")
    return parse_repo_spec(repo, default=provider)


def sign_ins(settings: Settings) -> tuple[Provider, ...]:
    """The forges people may sign in to the web app with (their sign-in is configured)."""
    return tuple(
        item for item in installed() if item.sign_in is not None and item.sign_in.client(settings)
    )


def proofs(settings: Settings) -> tuple[Provider, ...]:
    """The chats and trackers whose accounts people may prove (their OAuth client is set)."""
    return tuple(
        item for item in installed() if item.proof is not None and item.proof.client(settings)
    )
