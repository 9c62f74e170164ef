"""The README stays short (what Resolver is, the two commands, links into docs/), and the pages
its old sections moved to keep what they promised: every setting in the settings reference,
under its provider, and the GitHub App's permissions and events in Getting started."""

import re
from pathlib import Path

from resolver.core.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SETTINGS = ROOT / "docs" / "reference" / "settings.md"
WRITE = "run `uv run python scripts/settings_table.py --write`"


def test_the_settings_reference_lists_every_setting() -> None:
    text = SETTINGS.read_text()
    missing = [n for n in Settings.model_fields if f"`RESOLVER_{n.upper()}`" not in text]
    assert not missing, f"{WRITE}: {missing}"


def test_the_settings_reference_lists_each_providers_settings_under_it() -> None:
    from integrations import registry

    text = SETTINGS.read_text()
    for provider in registry.installed():
        kind = provider.settings
        under = text.split(f"\n## {provider.display_name}\n\n`{kind.__name__}`", 1)
        assert len(under) == 2, f"{WRITE}: {kind}"
        table = under[1].split("\n## ", 1)[0]
        missing = [f for f in kind.model_fields if f"`{kind.variable(f)}`" not in table]
        assert not missing, f"{WRITE}: {missing}"


def test_readme_is_short_with_the_two_commands_and_links_into_the_site() -> None:
    text = README.read_text()
    assert len(text.encode()) <= 10 * 1024, "README.md is over 10 KB: move the text into docs/"
    assert "make demo" in text and "make test" in text
    links = re.findall(r"\]\(((?:docs|integrations)/[^)#]+)", text)
    assert any(link.startswith("docs/") for link in links)
    broken = [link for link in links if not (ROOT / link).is_file()]
    assert not broken, broken


def test_getting_started_names_the_github_apps_permissions_and_events() -> None:
    from integrations.github.app_manifest import EVENTS, PERMISSIONS

    page = (ROOT / "docs" / "getting-started.md").read_text()
    text = page.split("## Setting up", 1)[1].split("\n## ", 1)[0]
    for name in (*PERMISSIONS, *EVENTS):
        assert f"`{name}`" in text, name
    assert "images/setup-page.png" in text
