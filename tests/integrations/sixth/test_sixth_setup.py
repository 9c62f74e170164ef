"""A sixth provider's set-up costs its own `setup.py` (and a template) and nothing else: /setup
shows its section and mounts its button, `resolver setup sixth` is its command, and
`resolver doctor` shows its offline check, though no generic module names it."""

from __future__ import annotations

import re
from html import unescape

import pytest
import typer
from starlette.testclient import TestClient
from typer.testing import CliRunner

from integrations import registry
from integrations.github.standin.api import GitHubAPI
from resolver.cli.doctor import _providers
from resolver.cli.setup import add_provider_commands
from resolver.core.settings import get_settings
from tests.integrations.sixth.provider import PROVIDER
from tests.integrations.sixth.provider.setup import DOOR_CHECK
from tests.web.conftest import PUBLIC_URL, browser, csrf_of, forge, public_pem, sign_in  # noqa: F401  (the GitHub sign-in, for /setup)


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sixth provider installed, as its registry line would install it."""
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, PROVIDER))


@pytest.fixture
def web(installed: None, forge: GitHubAPI):  # noqa: F811
    from resolver.app import create_app

    return create_app()


def _flash(client: TestClient) -> str:
    page = client.get("/setup").text
    found = re.search(r'<p class="flash" role="status">(.*?)</p>', page, re.S)
    return unescape(found.group(1)) if found else ""


def test_setup_shows_its_section_and_runs_its_button(web, forge: GitHubAPI) -> None:  # noqa: F811
    admin = browser(web)
    sign_in(admin, forge, "root", "/setup")
    page = admin.get("/setup").text
    assert 'id="setup-sixth"' in page and f"Sixth greets {PUBLIC_URL}" in page
    knocked = admin.post(
        "/setup/sixth/knock", data={"csrf": csrf_of(admin, "/setup"), "door": "back"}
    )
    assert knocked.status_code == 303 and knocked.headers["location"] == "/setup"
    assert _flash(admin) == "Knocked on the back door."
    admin.post("/setup/sixth/knock", data={"csrf": csrf_of(admin, "/setup"), "door": " "})
    assert _flash(admin) == "name the door. Nothing was changed."
    assert admin.get("/setup/sixth/knock").status_code == 405
    assert admin.post("/setup/sixth/knock", data={"csrf": "forged"}).status_code == 403


def test_only_admins_may_press_its_button(web, forge: GitHubAPI) -> None:  # noqa: F811
    nick = browser(web)
    sign_in(nick, forge, "nick")
    refused = nick.post("/setup/sixth/knock", data={"csrf": csrf_of(nick, "/jobs"), "door": "x"})
    assert refused.status_code == 403
    assert browser(web).post("/setup/sixth/knock", data={"door": "x"}).status_code == 303


def test_resolver_setup_sixth_is_its_command(installed: None, resolver_env) -> None:
    setup = typer.Typer()
    add_provider_commands(setup)
    done = CliRunner().invoke(setup, ["sixth", "--door", "side"], input="k1\nk2\n")
    assert done.exit_code == 0, done.output
    assert "knocked on the side door with 2 key(s)" in done.output
    empty = CliRunner().invoke(setup, ["sixth"], input="")
    assert empty.exit_code == 1 and "no Sixth key on standard input" in empty.output


def test_doctor_shows_its_offline_check(installed: None, resolver_env) -> None:
    found = {check.name: check for check in _providers(get_settings())}
    assert found[DOOR_CHECK].status == "fail"
    assert "resolver setup sixth" in found[DOOR_CHECK].detail
