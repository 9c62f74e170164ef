from pathlib import Path

from resolver.core.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_lists_every_setting() -> None:
    text = README.read_text()
    missing = [n for n in Settings.model_fields if f"`RESOLVER_{n.upper()}`" not in text]
    assert not missing, f"run `uv run python scripts/settings_table.py --write`: {missing}"


def test_readme_lists_each_providers_settings_under_it() -> None:
    from integrations import registry

    text = README.read_text().split("<!-- settings:start -->", 1)[1]
    for provider in registry.installed():
        kind = provider.settings
        under = text.split(f"**{provider.display_name}** (`{kind.__name__}`", 1)
        assert len(under) == 2, f"run `uv run python scripts/settings_table.py --write`: {kind}"
        table = under[1].split("\n\n**", 1)[0]
        missing = [f for f in kind.model_fields if f"`{kind.variable(f)}`" not in table]
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
