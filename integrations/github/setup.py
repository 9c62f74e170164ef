"""The GitHub App, created from a manifest and kept in the vault; its webhook secret rotated.

`/setup` and `resolver setup github` both call these: `start` says where the browser POSTs
the manifest and with which `state`; `finish` trades GitHub's one-time code for the App and
stores its id, key and secrets (`store.configured`); `rotate_webhook_secret` makes a new
secret, tells GitHub, and stores it.
"""

from __future__ import annotations

import hmac
import json
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from integrations import registry
from resolver.contract.setup import AppFromManifest, CreatedApp, ManifestUrls, SetupError
from resolver.core.settings import Settings
from resolver.onboarding.status import env_set
from resolver.store import configured

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

PROVIDER: Final = "github"
DONE_PATH: Final = "/setup/github/done"
STATE_SECONDS: Final = 3600.0  # GitHub's code works for an hour; the state no longer
SECRET_BYTES: Final = 32


def flow() -> AppFromManifest:
    found = registry.get(PROVIDER).app_from_manifest
    if found is None:
        raise SetupError("this GitHub integration cannot create its App from a manifest")
    return found


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


def state_matches(expected: str, returned: object) -> bool:
    """Compared in constant time; an empty state matches nothing."""
    if not expected or not isinstance(returned, str):
        return False
    return hmac.compare_digest(expected.encode(), returned.encode())


@dataclass(frozen=True)
class Finished:
    app: CreatedApp
    env_wins: tuple[str, ...]
    """Settings the environment sets too: its values stay in force over the stored ones."""


def finish(session: Session, settings: Settings, code: str) -> Finished:
    """Trade GitHub's code for the App and store its five values in the vault. The caller
    commits, then calls `configured.changed()`."""
    created = flow().convert(settings, code)
    configured.save(session, settings, created.values)
    return Finished(created, env_set(tuple(created.values)))


def rotate_webhook_secret(session: Session, settings: Settings) -> None:
    """A new webhook secret, first at GitHub (as the App), then in the vault: deliveries signed
    with the old one are refused from then on. The caller commits and calls `changed()`."""
    field = flow().webhook_secret_field
    if env_set((field,)):
        raise SetupError(
            f"RESOLVER_{field.upper()} is set in the environment, which wins over the vault: "
            "change it there (and in the App's settings on GitHub)"
        )
    secret = secrets.token_urlsafe(SECRET_BYTES)
    flow().set_webhook_secret(settings, secret)
    configured.save(session, settings, {field: secret})
