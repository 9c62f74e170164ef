"""`resolver sandbox …` as a user types it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner

from resolver.cli.sandbox import app
from resolver.core.settings import get_settings

pytestmark = pytest.mark.docker


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, image: str) -> Iterator[None]:
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    monkeypatch.setenv("RESOLVER_SANDBOX_IMAGE", image)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_run_prints_the_output_and_exits_with_the_commands_code(cli_env: None) -> None:
    result = CliRunner().invoke(app, ["run", "--", "echo hello; exit 7"])
    assert result.output == "hello\n"
    assert result.exit_code == 7


def test_run_joins_several_arguments_and_copies_a_given_workspace_in(
    cli_env: None, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "hello.txt").write_text("from the host\n")
    result = CliRunner().invoke(
        app, ["run", "--workspace", str(mine), "--", "cat hello.txt && touch 'made here'"]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "from the host\n"
    assert not (mine / "made here").exists()


def test_build_is_a_no_op_when_the_tag_exists(cli_env: None, image: str) -> None:
    result = CliRunner().invoke(app, ["build", "--offline"])
    assert result.exit_code == 0
    assert result.output.startswith(f"{image} and resolver-egress-proxy:")  # both images
    assert " ready in " in result.output


def test_ps_lists_sandboxes(cli_env: None) -> None:
    result = CliRunner().invoke(app, ["ps"])
    assert result.exit_code == 0
    assert "container" in result.output
