"""`resolver setup bitbucket` registers the hook on the Bitbucket stand-in through the generic
set-up code: the hook carries a new secret, which the vault keeps and the webhook then verifies
with; the admin's token is never kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from integrations.bitbucket.settings import BitbucketSettings
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Repo
from resolver.cli.setup import add_provider_commands
from resolver.contract.inbound import secret_value
from resolver.core.settings import get_settings
from resolver.store import configured
from tests.conftest import ResolverEnv, reset_caches
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO


@pytest.fixture
def on_bitbucket(
    bitbucket_api: BitbucketAPI, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[BitbucketAPI]:
    monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", bitbucket_api.api_url)
    monkeypatch.delenv("RESOLVER_BITBUCKET_WEBHOOK_SECRET", raising=False)
    reset_caches()
    yield bitbucket_api
    reset_caches()


def _stored_secret() -> str | None:
    """The webhook's secret as every process reads it: the vault's stored settings on top."""
    configured.install()
    reset_caches()
    return secret_value(BitbucketSettings.of(get_settings()).webhook_secret)


def test_resolver_setup_bitbucket_registers_and_rotates_the_repository_hook(
    resolver_env: ResolverEnv, on_bitbucket: BitbucketAPI
) -> None:
    setup = typer.Typer()
    add_provider_commands(setup)
    done = CliRunner().invoke(setup, ["bitbucket", "--repo", REPO], input=BOT_TOKEN + "\n")
    assert done.exit_code == 0, done.output
    [hook] = on_bitbucket.hooks.values()
    assert hook.owner == REPO and hook.url.endswith("/webhooks/bitbucket")
    assert f"registered the bitbucket webhook {hook.uuid}" in done.output
    assert _stored_secret() == hook.secret and BOT_TOKEN not in done.output

    first = hook.secret
    rotated = CliRunner().invoke(
        setup, ["bitbucket", "--repo", REPO, "--rotate"], input=BOT_TOKEN + "\n"
    )
    assert rotated.exit_code == 0, rotated.output
    assert hook.secret != first and _stored_secret() == hook.secret
    both = CliRunner().invoke(setup, ["bitbucket", "--repo", REPO, "--workspace", "x"], input="t\n")
    assert both.exit_code == 1 and "exactly one of --repo or --workspace" in both.output
    assert len(on_bitbucket.hooks) == 1
