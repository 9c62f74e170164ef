"""What each installed provider's set-up is, as the generic web and CLI code render it: its
/setup section, its actions and its `resolver setup` command, from its `ProviderSetup`; a
provider whose webhook Resolver registers gets the webhook form, actions and command."""

from __future__ import annotations

from dataclasses import dataclass

from resolver.contract.provider import Provider
from resolver.contract.setup import ProviderSetup, SetupCommand, SetupSection, WebAction
from resolver.onboarding.hooks import hook_actions, hook_command

HOOK_TEMPLATE = "setup/_hook.html"
PLAIN_TEMPLATE = "setup/_provider.html"


@dataclass(frozen=True)
class Section:
    """A provider's section of /setup, with its template's full name."""

    section: SetupSection
    template: str


def setup_of(provider: Provider) -> ProviderSetup | None:
    return provider.setup() if provider.setup is not None else None


def section_of(provider: Provider) -> Section:
    setup = setup_of(provider)
    if setup is not None and setup.section is not None:
        own = setup.section
        template = f"{provider.name}/{own.template}" if own.template else PLAIN_TEMPLATE
        return Section(own, template)
    if setup is not None and setup.webhook is not None:
        return Section(SetupSection(provider.secrets, provider.secrets[:1]), HOOK_TEMPLATE)
    return Section(SetupSection(provider.secrets), PLAIN_TEMPLATE)


def actions_of(provider: Provider) -> tuple[WebAction, ...]:
    """Its own actions, then the webhook's where it has one (under names not taken)."""
    setup = setup_of(provider)
    if setup is None:
        return ()
    own = setup.actions
    taken = {action.name for action in own}
    hooks = hook_actions(provider.name) if setup.webhook is not None else ()
    return (*own, *(action for action in hooks if action.name not in taken))


def command_of(provider: Provider) -> SetupCommand | None:
    setup = setup_of(provider)
    if setup is None:
        return None
    if setup.command is None and setup.webhook is not None:
        return hook_command(provider.name, setup.webhook)
    return setup.command
