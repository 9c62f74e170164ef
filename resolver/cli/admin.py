"""Accounts, tokens, keys and the doctor."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from integrations import registry
from resolver.cli.transaction import in_transaction
from resolver.core.settings import get_settings
from resolver.store import accounts, forget
from resolver.store.db import get_engine
from resolver.store.vault import Vault, generate_key, rotate_all, store_credential

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

console = Console()
users_app = typer.Typer(help="People who may trigger jobs.", no_args_is_help=True)
tokens_app = typer.Typer(help="Stored, encrypted tokens.", no_args_is_help=True)
keys_app = typer.Typer(help="Vault encryption keys.", no_args_is_help=True)


def fail(message: str) -> None:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


@users_app.command("add")
def users_add(
    name: str, admin: bool = typer.Option(False, "--admin", help="May administer the web app.")
) -> None:
    """Add a user."""
    try:
        in_transaction(accounts.add_user, name, admin=admin)
    except accounts.AccountError as error:
        fail(str(error))
    console.print(f"added {'admin' if admin else 'user'} {name}")


@users_app.command("rename")
def users_rename(name: str, new_name: str) -> None:
    """Give a user another name (names are unique whatever their case)."""
    try:
        in_transaction(accounts.rename_user, name, new_name)
    except accounts.AccountError as error:
        fail(str(error))
    console.print(f"renamed user {name} to {new_name}")


@users_app.command("list")
def users_list() -> None:
    """List users and their linked accounts."""
    table = Table("user", "linked accounts")
    for row in in_transaction(_user_rows):
        table.add_row(*row)
    console.print(table)


def _user_rows(session: Session) -> list[tuple[str, str]]:
    rows = []
    for user in accounts.all_users(session):
        links = ", ".join(
            f"{i.provider}:{i.external_id}" + (f" ({i.login})" if i.login else "")
            for i in user.identities
        )
        rows.append((user.name + (" (admin)" if user.is_admin else ""), links or "-"))
    return rows


@users_app.command("link")
def users_link(
    name: str,
    provider: str = typer.Option(..., help="An installed provider (resolver doctor lists them)."),
    external_id: str = typer.Option(
        ..., help="The account's id at the provider, as `resolver users list` shows it."
    ),
    login: str | None = typer.Option(None, help="The provider login or handle."),
) -> None:
    """Link a provider account to a user."""
    if registry.find(provider) is None:
        fail(f"unknown provider {provider!r}; use one of {', '.join(registry.names())}")
    try:
        in_transaction(accounts.link_identity, name, provider, external_id, login)
    except accounts.AccountError as error:
        fail(str(error))
    console.print(f"linked {provider}:{external_id} to {name}")


@users_app.command("revoke")
def users_revoke(
    provider: str = typer.Option(..., help="The provider of the linked account."),
    external_id: str = typer.Option(
        ..., help="The account's id at the provider, as `resolver users list` shows it."
    ),
) -> None:
    """Unlink a provider account from its user and delete that user's stored token there."""
    owner = in_transaction(_revoke, provider, external_id)
    if owner is None:
        fail(f"no {provider} account {external_id} is linked; `resolver users list` shows links")
    console.print(f"revoked {provider}:{external_id} of {owner}")


def _revoke(session: Session, provider: str, external_id: str) -> str | None:
    """The name of the user whose link was removed, or None if there was none."""
    identity = accounts.find_identity(session, provider, external_id=external_id)
    gone = None if identity is None else accounts.revoke_link(session, identity.id)
    return gone.user.name if gone is not None else None


@users_app.command("forget")
def users_forget(
    name: str,
    wait: float = typer.Option(120.0, help="Seconds to wait for their running jobs to stop."),
) -> None:
    """Forget a person: stop their running jobs, delete their identities, tokens, sessions and
    user, and replace their request texts and trajectories with "removed"; their job rows
    stay, with costs."""
    try:
        running = in_transaction(forget.stop_jobs, name)
        deadline = time.monotonic() + wait
        while running and time.monotonic() < deadline:
            time.sleep(1.0)
            running = in_transaction(forget.still_running, running)
        gone = forget.forget_now(get_engine(), name)
    except forget.ForgetError as error:
        fail(str(error))
    console.print(
        f"forgot {gone.name}: {gone.identities} linked account(s), {gone.tokens} token(s), "
        f"{gone.sessions} web session(s); {gone.jobs} job(s) kept with their text removed"
    )


@tokens_app.command("set")
def tokens_set(
    provider: str = typer.Option(..., help="An installed provider (resolver doctor lists them)."),
    user: str | None = typer.Option(None, help="Owner: a user name."),
    installation: str | None = typer.Option(None, help="Owner: an installation's external id."),
    kind: str = typer.Option("pat", help="pat, oauth or bot."),
    scope: str | None = typer.Option(None, help="What the token may reach (free text)."),
) -> None:
    """Store a token, read from standard input (never from the command line)."""
    if (user is None) == (installation is None):
        fail("give exactly one of --user or --installation")
    if kind not in ("pat", "oauth", "bot"):
        fail("--kind must be pat, oauth or bot")
    secret = sys.stdin.readline().strip()
    if not secret:
        fail('no token on standard input; pipe it in: `printf %s "$TOKEN" | resolver tokens set …`')
    vault = Vault(get_settings().fernet_keys)
    try:
        in_transaction(_store_token, vault, provider, user, installation, kind, secret, scope)
    except accounts.AccountError as error:
        fail(str(error))
    console.print(f"stored a {provider} {kind} token")


def _store_token(
    session: Session,
    vault: Vault,
    provider: str,
    user: str | None,
    installation: str | None,
    kind: str,
    secret: str,
    scope: str | None,
) -> None:
    owner_user = accounts.get_user(session, user).id if user else None
    owner_inst = (
        accounts.ensure_installation(session, provider, installation).id if installation else None
    )
    store_credential(
        session,
        vault,
        provider=provider,
        kind=kind,
        secret=secret,
        user_id=owner_user,
        installation_id=owner_inst,
        scope=scope,
    )


@keys_app.command("rotate")
def keys_rotate() -> None:
    """Re-encrypt every stored secret with the first key of RESOLVER_SECRET_KEYS."""
    vault = Vault(get_settings().fernet_keys)
    count = in_transaction(rotate_all, vault)
    console.print(f"re-encrypted {count} credential(s) with the newest key")


@keys_app.command("generate")
def keys_generate() -> None:
    """Print a new Fernet key (put it first in RESOLVER_SECRET_KEYS)."""
    typer.echo(generate_key())


def doctor(
    offline: bool = typer.Option(
        False, "--offline", help="Skip the checks that call providers and the LLM."
    ),
) -> None:
    """Check every dependency and setting, and each provider's app, webhook and secrets; say
    how to fix what is wrong."""
    from resolver.cli.doctor import run_checks

    table = Table("check", "status", "detail / fix")
    failed = 0
    for check in run_checks(offline=offline):
        colour = {"ok": "green", "off": "green"}.get(check.status, "red")
        table.add_row(check.name, f"[{colour}]{check.status}[/{colour}]", check.detail)
        failed += check.status == "fail"
    console.print(table)
    raise typer.Exit(1 if failed else 0)
