from pathlib import Path

from resolver.core.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_lists_every_setting() -> None:
    text = README.read_text()
    missing = [n for n in Settings.model_fields if f"`RESOLVER_{n.upper()}`" not in text]
    assert not missing, f"run `uv run python scripts/settings_table.py --write`: {missing}"


def test_readme_quick_start_is_two_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text


def test_readme_names_the_github_apps_permissions_and_events() -> None:
    from integrations.github.app_manifest import EVENTS, PERMISSIONS

    text = README.read_text().split("## Setting up", 1)[1].split("\n## ", 1)[0]
    for name in (*PERMISSIONS, *EVENTS):
        assert f"`{name}`" in text, name
    assert "docs/setup-page.png" in text
