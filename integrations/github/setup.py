"""The GitHub App, created from a manifest and kept in the vault; its webhook secret rotated;
and what `/setup`, `resolver setup github` and `resolver doctor` show and do with it (`SETUP`).

`start` says where the browser POSTs the manifest and with which `state`; `finish` trades
GitHub's one-time code for the App and keeps its id, key and secrets (`SetupStore.save`);
`rotate_webhook_secret` makes a new secret, tells GitHub, and keeps it.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from integrations.github.app_setup import APP_FROM_MANIFEST
from integrations.github.setup_cli import code_from_browser, state_matches
from resolver.contract.setup import (
    ActionInput,
    Answer,
    AppFromManifest,
    CliOption,
    CommandInput,
    CreatedApp,
    Flash,
    ManifestUrls,
    ProviderSetup,
    SectionInput,
    SetupCommand,
    SetupError,
    SetupSection,
    SetupStore,
    ShowPage,
    WebAction,
)
from resolver.core.logs import log
from resolver.core.settings import Settings

logger = logging.getLogger(__name__)

PROVIDER: Final = "github"
DONE_PATH: Final = "/setup/github/done"
STATE_SECONDS: Final = 3600.0  # GitHub's code works for an hour; the state no longer
SECRET_BYTES: Final = 32
PENDING: Final = "setup_github"  # the session key of a manifest sent to GitHub
CREATED: Final = "setup_github_created"


def flow() -> AppFromManifest:
    return APP_FROM_MANIFEST


def urls(settings: Settings, redirect: str | None = None) -> ManifestUrls:
    """The App's URLs: events to `/webhooks/github` (as `resolver.app` mounts each provider),
    people back to `redirect` (by default `/setup/github/done`) and sign-in to its callback."""
    public = settings.public_url.rstrip("/")
    return ManifestUrls(
        home=public,
        webhook=f"{public}/webhooks/{PROVIDER}",
        redirect=redirect or f"{public}{DONE_PATH}",
        sign_in_callback=f"{public}/signin/{PROVIDER}/done",
    )


@dataclass(frozen=True)
class Start:
    """What the browser POSTs (`manifest`, a form field) and where (`url`, with the state)."""

    url: str
    manifest: str
    state: str
    name: str


def start(
    settings: Settings,
    organisation: str | None = None,
    name: str | None = None,
    redirect: str | None = None,
) -> Start:
    """The manifest for a new App owned by the signed-in GitHub account, or `organisation`.
    SetupError for a bad organisation or name."""
    app = flow()
    owner = app.check_owner(organisation) if organisation and organisation.strip() else None
    chosen = app.check_name(name if name and name.strip() else app.default_name(settings))
    state = secrets.token_urlsafe(24)
    manifest = json.dumps(app.manifest(chosen, urls(settings, redirect)))
    return Start(app.new_app_url(settings, owner, state), manifest, state, chosen)


def pending(state: str, now: float) -> dict[str, object]:
    """What the admin's session keeps while GitHub has the manifest."""
    return {"state": state, "at": now}


def state_ok(kept: object, returned: object, now: float) -> bool:
    """Whether GitHub's `state` is the one this session sent, within the hour."""
    if not isinstance(kept, dict) or not isinstance(returned, str):
        return False
    expected, at = kept.get("state"), kept.get("at")
    if not isinstance(expected, str) or not expected or not isinstance(at, (int, float)):
        return False
    return 0 <= now - at < STATE_SECONDS and state_matches(expected, returned)


@dataclass(frozen=True)
class Finished:
    app: CreatedApp
    env_wins: tuple[str, ...]
    """Settings the environment sets too: its values stay in force over the stored ones."""


def finish(store: SetupStore, settings: Settings, code: str) -> Finished:
    """Trade GitHub's code for the App and keep its five values in the vault."""
    created = flow().convert(settings, code)
    store.save(created.values)
    return Finished(created, store.env_set(tuple(created.values)))


def rotate_webhook_secret(store: SetupStore, settings: Settings) -> None:
    """A new webhook secret, first at GitHub (as the App), then in the vault: deliveries signed
    with the old one are refused from then on."""
    field = flow().webhook_secret_field
    if store.env_set((field,)):
        raise SetupError(
            f"RESOLVER_{field.upper()} is set in the environment, which wins over the vault: "
            "change it there (and in the App's settings on GitHub)"
        )
    secret = secrets.token_urlsafe(SECRET_BYTES)
    flow().set_webhook_secret(settings, secret)
    store.save({field: secret})


def _manifest(given: ActionInput) -> Answer:
    """The admin pressed "Create GitHub App": a page that POSTs the manifest to GitHub."""
    form = given.values
    organisation = form.get("organisation", "") if form.get("owner") == "org" else ""
    if form.get("owner") == "org" and not organisation.strip():
        return Flash("Name the organisation that will own the App.")
    try:
        started = start(given.settings, organisation, form.get("name", ""))
    except SetupError as error:
        return Flash(f"{error}; nothing was sent to GitHub.")
    given.session[PENDING] = pending(started.state, given.now)
    log(logger, logging.INFO, "setup.github_manifest_sent", by=given.by)
    return ShowPage("go.html", {"started": started})


def _done(given: ActionInput) -> Answer:
    """GitHub sent the admin back with a code: claim the App and keep it in the vault."""
    kept = given.session.pop(PENDING, None)
    if not state_ok(kept, given.values.get("state"), given.now):
        log(logger, logging.WARNING, "setup.github_state_refused", by=given.by)
        return Flash(
            "GitHub's answer does not belong to a Create GitHub App started in this browser "
            "within the hour; nothing was stored. Start again below."
        )
    try:
        finished = finish(given.store, given.settings, given.values.get("code", ""))
    except SetupError as error:
        return Flash(f"{error} Nothing was stored.")
    app = finished.app
    given.session[CREATED] = {
        "slug": app.slug,
        "html_url": app.html_url,
        "install_url": app.install_url,
        "owner": app.owner,
    }
    log(logger, logging.INFO, "setup.github_app_created", slug=app.slug, by=given.by)
    return Flash(_created_message(finished))


def _created_message(finished: Finished) -> str:
    text = (
        f"Created the GitHub App {finished.app.slug}; its id, key and secrets are in the "
        "vault. Install it on the repositories the bot may work on."
    )
    if finished.env_wins:
        names = ", ".join(f"RESOLVER_{name.upper()}" for name in finished.env_wins)
        text += f" The environment still sets {names}, and its values win over the stored ones."
    return text


def _rotate(given: ActionInput) -> Answer:
    try:
        rotate_webhook_secret(given.store, given.settings)
    except SetupError as error:
        return Flash(f"The webhook secret was not changed: {error}.")
    log(logger, logging.INFO, "setup.github_secret_rotated", by=given.by)
    return Flash(
        "The GitHub webhook secret was changed at GitHub and in the vault; deliveries signed "
        "with the old one are refused from now on."
    )


def _section_values(given: SectionInput) -> dict[str, object]:
    return {
        "created": given.session.pop(CREATED, None),
        "default_name": flow().default_name(given.settings),
        "webhook": urls(given.settings).webhook,
    }


def _command(given: CommandInput) -> None:
    """Rotate the webhook secret, claim the App with a code, or create it in the browser."""
    options, say = given.options, given.console.say
    if options.get("rotate"):
        rotate_webhook_secret(given.store, given.settings)
        say("changed the GitHub webhook secret at GitHub and in the vault")
        return
    code = str(options.get("code") or "") or _code_from_browser(given)
    finished = finish(given.store, given.settings, code)
    say(f"created the GitHub App {finished.app.slug}; its id, key and secrets are in the vault")
    say(f"install it: {finished.app.install_url}")
    for field in finished.env_wins:
        say(f"note: RESOLVER_{field.upper()} is set in the environment and still wins")


def _code_from_browser(given: CommandInput) -> str:
    org, name = given.options.get("org"), given.options.get("name")
    port, wait = given.options.get("port") or 0, given.options.get("wait") or 900.0

    def begin(redirect: str) -> Start:
        chosen = str(org) if org else None, str(name) if name else None
        return start(given.settings, *chosen, redirect=redirect)

    return code_from_browser(given.console, begin, int(port), float(wait))


SETUP: Final = ProviderSetup(
    section=SetupSection(
        fields=(*flow().fields, "github_app_private_key_path"),
        required=("github_app_id", "github_webhook_secret"),
        template="setup.html",
        values=_section_values,
    ),
    actions=(
        WebAction("manifest", "POST", _manifest, hidden=True),
        WebAction("done", "GET", _done, hidden=True),
        WebAction("rotate", "POST", _rotate, hidden=True),
    ),
    templates=Path(__file__).parent / "templates",
    form_targets=lambda settings: (flow().new_app_url(settings, None, ""),),
    command=SetupCommand(
        help="Create the GitHub App from a manifest (its id, key and secrets go to the vault).",
        options=(
            CliOption("org", ("--org",), "Organisation to own the App."),
            CliOption("name", ("--name",), 'The App\'s name (default "Resolver (host)").'),
            CliOption("code", ("--code",), "Claim the App with the code GitHub sent back."),
            CliOption(
                "rotate",
                ("--rotate", "--rotate-secret"),
                "Give the App a new webhook secret (at GitHub and here).",
                False,
                "flag",
            ),
            CliOption(
                "port", ("--port",), "Port of the one-shot local page (0: any free port).", 0, "int"
            ),
            CliOption(
                "wait", ("--wait",), "Seconds to wait for GitHub's redirect back.", 900.0, "float"
            ),
        ),
        run=_command,
    ),
)
