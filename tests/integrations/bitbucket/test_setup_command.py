"""`resolver setup bitbucket` and /setup register the hook on the Bitbucket stand-in through the
generic set-up code: the hook carries a new secret, which the vault keeps and the webhook then
verifies with; the admin's token is never kept."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
import typer
from starlette.testclient import TestClient
from typer.testing import CliRunner

from integrations.bitbucket.settings import BitbucketSettings
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Repo
from integrations.github.standin.api import GitHubAPI
from resolver.cli.setup import add_provider_commands
from resolver.contract.inbound import secret_value
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from resolver.store import configured
from tests.conftest import ResolverEnv, reset_caches
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO
from tests.support.serving import served_answer
from tests.web.conftest import PUBLIC_URL, browser, csrf_of, forge, public_pem, sign_in  # noqa: F401  (the GitHub sign-in, for /setup)


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


def _flash(client: TestClient) -> str:
    page = client.get("/setup").text
    found = re.search(r'<p class="flash" role="status">(.*?)</p>', page, re.S)
    return unescape(found.group(1)) if found else ""


def test_setup_page_registers_the_workspace_hook(
    on_bitbucket: BitbucketAPI,
    forge: GitHubAPI,  # noqa: F811
) -> None:
    from resolver.app import create_app

    on_bitbucket.add_workspace_admin("acme", "resolver")
    admin = browser(create_app())
    sign_in(admin, forge, "root", "/setup")
    assert 'id="setup-bitbucket"' in admin.get("/setup").text
    form = {"csrf": csrf_of(admin, "/setup"), "credential": BOT_TOKEN, "scope": "workspace:acme"}
    answer = admin.post("/setup/bitbucket/hook", data=form)
    assert answer.status_code == 303
    [hook] = on_bitbucket.hooks.values()
    assert (hook.owner, hook.subject_type) == ("acme", "workspace")
    assert _flash(admin).startswith(f"Registered the bitbucket webhook {hook.uuid}")
    assert _stored_secret() == hook.secret and PUBLIC_URL in hook.url
    assert BOT_TOKEN not in admin.get("/setup").text


@pytest.mark.parametrize(
    "answer",
    [
        b'{"values": [{"uuid": null, "url": "%s"}]}',
        b'{"values": [{"uuid": 7, "url": "%s"}]}',
        b'{"values": [5]}',
        b'{"values": []}',  # and a created hook answered without its uuid
    ],
)
def test_an_answer_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    url = hooks.webhook_url(get_settings(), "bitbucket")
    with served_answer(answer.replace(b"%s", url.encode())) as api:
        monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", api)
        monkeypatch.delenv("RESOLVER_BITBUCKET_WEBHOOK_SECRET", raising=False)
        reset_caches()
        unusable = r"Bitbucket's answer to (GET|POST) /repositories/\S+/hooks was unusable"
        with pytest.raises(SetupError, match=unusable):
            hooks.register_hook(get_settings(), "bitbucket", BOT_TOKEN, f"repo:{REPO}")
    assert _stored_secret() is None
