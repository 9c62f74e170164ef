"""Registering Resolver's webhook on GitLab, Jira or Linear, and rotating its secret: generate
the secrets, have the provider take them (`Provider.setup`), then keep them in the vault, where
every process's `verify` reads them.

The provider is changed first and the vault second: a refusal leaves both as they were. After a
rotation, other processes verify with the old secret until they re-read the vault (within
`core.settings.OVERLAY_SECONDS`); the provider's retries cover that gap.
"""

from __future__ import annotations

import base64
import logging
import secrets
from dataclasses import dataclass

from integrations import registry
from resolver.contract.setup import (
    ActionInput,
    Answer,
    CliOption,
    CommandInput,
    Flash,
    HookRequest,
    SetupCommand,
    SetupError,
    WebAction,
    WebhookSetup,
    pasted_token,
)
from resolver.core.logs import log, register_secret, unmasked_token
from resolver.core.settings import Settings
from resolver.onboarding.store import VaultStore, check_not_in_environment

logger = logging.getLogger(__name__)

SECRET_BYTES = 32


@dataclass(frozen=True)
class HookResult:
    """What was registered: never a secret."""

    provider: str
    hook_id: str
    url: str
    events: tuple[str, ...]
    created: bool
    stored: tuple[str, ...]
    """The settings now in the vault."""
    tested: bool


def generate_secret() -> str:
    """A webhook secret: 32 random bytes, URL-safe."""
    return unmasked_token(SECRET_BYTES)


def generate_signing_secret() -> str:
    """A Standard Webhooks key: `whsec_` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def webhook_setups() -> tuple[str, ...]:
    """The providers whose webhook Resolver can register."""
    return tuple(item.name for item in registry.installed() if _setup_of(item.name) is not None)


def _setup_of(name: str) -> WebhookSetup | None:
    provider = registry.find(name)
    if provider is None or provider.setup is None:
        return None
    return provider.setup().webhook


def webhook_url(settings: Settings, name: str) -> str:
    return f"{settings.public_url.rstrip('/')}/webhooks/{name}"


def register_hook(
    settings: Settings,
    name: str,
    credential: str,
    scope: str | None = None,
    *,
    rotate: bool = False,
) -> HookResult:
    """Register (or, with `rotate`, re-key) the provider's webhook and store its secrets;
    SetupError with what to fix, and nothing changed, when it cannot."""
    webhook = _setup_of(name)
    if webhook is None:
        raise SetupError(f"Resolver cannot register a webhook on {name!r}")
    credential = pasted_token(credential, f"an admin's {name} token")
    register_secret(credential)
    names = (
        webhook.secret_setting,
        *([webhook.signing_setting] if webhook.signing_setting else []),
    )
    check_not_in_environment(names)
    signing = generate_signing_secret() if webhook.signing_setting else None
    request = HookRequest(
        url=webhook_url(settings, name),
        secret=generate_secret(),
        credential=credential,
        scope=scope.strip() if scope and scope.strip() else None,
        signing_secret=signing,
    )
    register_secret(request.secret)
    # Of two at once (a button pressed twice, the command run twice), the second waits for the
    # first's end and finds its hook at the provider: both found none and created one each.
    with VaultStore(settings).held(f"{name}:hook") as kept:
        registered = (webhook.rotate if rotate else webhook.register)(settings, request)
        values = {webhook.secret_setting: registered.secret}
        if webhook.signing_setting and signing:
            values[webhook.signing_setting] = signing
        kept.save(values)
    tested = _test(settings, webhook, request, registered.hook_id)
    event = "setup.webhook_rotated" if rotate else "setup.webhook_registered"
    log(logger, logging.INFO, event, provider=name, hook=registered.hook_id)
    return HookResult(
        name,
        registered.hook_id,
        request.url,
        registered.events,
        registered.created,
        tuple(values),
        tested,
    )


def _test(settings: Settings, webhook: WebhookSetup, request: HookRequest, hook_id: str) -> bool:
    """Ask for a test delivery where the provider offers one; it arrives at the new secret."""
    if webhook.test is None:
        return False
    webhook.test(settings, request, hook_id)
    return True


ROTATE_HELP = "Give the webhook a new secret (the provider first, then the vault)."


def hook_actions(name: str) -> tuple[WebAction, ...]:
    """`/setup/<name>/hook` registers the webhook, `/setup/<name>/rotate` re-keys it, with the
    admin's token from the form."""

    def run(rotate: bool) -> WebAction:
        def act(given: ActionInput) -> Answer:
            credential, scope = given.values.get("credential", ""), given.values.get("scope")
            done = register_hook(given.settings, name, credential, scope, rotate=rotate)
            verb = "Rotated the secret of" if rotate else "Registered"
            tested = " A test delivery was requested." if done.tested else ""
            events = ", ".join(done.events)
            return Flash(f"{verb} the {name} webhook {done.hook_id} ({events}).{tested}")

        return WebAction("rotate" if rotate else "hook", "POST", act)

    return (run(False), run(True))


def hook_command(name: str, webhook: WebhookSetup) -> SetupCommand:
    """`resolver setup <name> [--rotate]`: the admin's token from standard input."""

    def run(given: CommandInput) -> None:
        scope = webhook.scope_of(given.options)
        rotate = bool(given.options.get("rotate"))
        credential = given.console.read_lines(f"{name} admin token")[0]
        result = register_hook(given.settings, name, credential, scope, rotate=rotate)
        say = given.console.say
        verb = (
            "rotated the secret of" if rotate else ("registered" if result.created else "updated")
        )
        say(f"{verb} the {name} webhook {result.hook_id} at {result.url}")
        say(f"events: {', '.join(result.events)}")
        say(f"stored in the vault: {', '.join(result.stored)}")
        if result.tested:
            say("a test delivery was requested; it arrives signed with the new secret")

    rotate = CliOption("rotate", ("--rotate",), ROTATE_HELP, False, "flag")
    return SetupCommand(webhook.help, (*webhook.options, rotate), run)
