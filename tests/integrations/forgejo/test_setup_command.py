"""`resolver setup forgejo` and /setup register the hook on the Forgejo stand-in, through the
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

from integrations.forgejo.settings import ForgejoSettings
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Repo
from integrations.github.standin.api import GitHubAPI
from resolver.cli.setup import add_provider_commands
from resolver.contract.inbound import secret_value
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from resolver.store import configured
from tests.conftest import ResolverEnv, reset_caches
from tests.integrations.forgejo.conftest import BOT_TOKEN, REPO
from tests.support.serving import served_answer
from tests.web.conftest import PUBLIC_URL, browser, csrf_of, forge, public_pem, sign_in  # noqa: F401  (the GitHub sign-in, for /setup)


@pytest.fixture
def on_instance(
    forgejo_api: ForgejoAPI, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ForgejoAPI]:
    monkeypatch.setenv("RESOLVER_FORGEJO_URL", forgejo_api.url)
    monkeypatch.delenv("RESOLVER_FORGEJO_WEBHOOK_SECRET", raising=False)
    reset_caches()
    yield forgejo_api
    reset_caches()


def _stored_secret() -> str | None:
    """The webhook's secret as every process reads it: the vault's stored settings on top."""
    configured.install()
    reset_caches()
    return secret_value(ForgejoSettings.of(get_settings()).webhook_secret)


def test_resolver_setup_forgejo_registers_the_repository_hook(
    resolver_env: ResolverEnv, on_instance: ForgejoAPI
) -> None:
    setup = typer.Typer()
    add_provider_commands(setup)
    done = CliRunner().invoke(setup, ["forgejo", "--repo", REPO], input=BOT_TOKEN + "\n")
    assert done.exit_code == 0, done.output
    [hook] = on_instance.hooks.values()
    assert hook.owner == REPO and hook.config["url"].endswith("/webhooks/forgejo")
    assert f"registered the forgejo webhook {hook.id}" in done.output
    assert _stored_secret() == hook.config["secret"]
    assert BOT_TOKEN not in done.output

    first = hook.config["secret"]
    rotated = CliRunner().invoke(
        setup, ["forgejo", "--repo", REPO, "--rotate"], input=BOT_TOKEN + "\n"
    )
    assert rotated.exit_code == 0, rotated.output
    assert f"rotated the secret of the forgejo webhook {hook.id}" in rotated.output
    assert hook.config["secret"] != first and _stored_secret() == hook.config["secret"]
    both = CliRunner().invoke(setup, ["forgejo", "--repo", REPO, "--org", "x"], input="t\n")
    assert both.exit_code == 1 and "exactly one of --repo or --org" in both.output
    assert len(on_instance.hooks) == 1


def _flash(client: TestClient) -> str:
    page = client.get("/setup").text
    found = re.search(r'<p class="flash" role="status">(.*?)</p>', page, re.S)
    return unescape(found.group(1)) if found else ""


def test_setup_page_registers_the_organisation_hook(
    on_instance: ForgejoAPI,
    forge: GitHubAPI,  # noqa: F811
) -> None:
    from resolver.app import create_app

    on_instance.add_org("forgejo", "resolver")
    admin = browser(create_app())
    sign_in(admin, forge, "root", "/setup")
    assert 'id="setup-forgejo"' in admin.get("/setup").text
    form = {"csrf": csrf_of(admin, "/setup"), "credential": BOT_TOKEN, "scope": "org:forgejo"}
    answer = admin.post("/setup/forgejo/hook", data=form)
    assert answer.status_code == 303
    [hook] = on_instance.hooks.values()
    assert hook.owner == "forgejo"
    assert _flash(admin).startswith(f"Registered the forgejo webhook {hook.id}")
    assert _stored_secret() == hook.config["secret"]
    assert PUBLIC_URL in hook.config["url"]


@pytest.mark.parametrize(
    "answer",
    [
        b"<html>maintenance</html>",
        b'[{"id": 5, "config": "x"}]',
        b'[{"id": null, "config": {"url": "%s"}}]',
        b'[{"id": "x", "config": {"url": "%s"}}]',
        b"[]",  # and a created hook answered as [] too
    ],
)
def test_an_answer_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    url = hooks.webhook_url(get_settings(), "forgejo")
    with served_answer(answer.replace(b"%s", url.encode())) as instance:
        monkeypatch.setenv("RESOLVER_FORGEJO_URL", instance)
        monkeypatch.delenv("RESOLVER_FORGEJO_WEBHOOK_SECRET", raising=False)
        reset_caches()
        unusable = r"Forgejo's answer to (GET|POST) /repos/\{owner\}/\{repo\}/hooks was unusable"
        with pytest.raises(SetupError, match=unusable):
            hooks.register_hook(get_settings(), "forgejo", BOT_TOKEN, f"repo:{REPO}")
    assert _stored_secret() is None
