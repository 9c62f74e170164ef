"""Each installed provider's folder has the page an operator follows (`README.md`), and it names
every event the provider acts on and every setting its set-up, webhook and sign-in read, and
every variable of its settings class (the site's settings reference lists them too, generated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations import registry
from resolver.contract.provider import Provider
from resolver.onboarding.described import section_of

ROOT = Path(__file__).resolve().parents[2]


def _settings_of(provider: Provider) -> set[str]:
    names = {*provider.secrets, *section_of(provider).section.fields}
    for described in (provider.sign_in, provider.proof):
        if described is not None:
            names.update(described.client_settings)
    return names


@pytest.mark.parametrize("provider", registry.installed(), ids=registry.names())
def test_the_providers_page_names_its_events_and_settings(provider: Provider) -> None:
    page = ROOT / "integrations" / provider.name / "README.md"
    assert page.is_file(), f"{provider.name} has no README.md an operator can follow"
    text = page.read_text()
    unnamed = [key for key in provider.integration.routes if f"`{key}`" not in text]
    assert not unnamed, f"{page} does not name the events it acts on: {unnamed}"
    unset = [n for n in sorted(_settings_of(provider)) if f"`RESOLVER_{n.upper()}`" not in text]
    assert not unset, f"{page} does not name its settings: {unset}"
    kind = provider.settings
    variables = [kind.variable(field) for field in kind.model_fields]
    untold = [name for name in variables if f"`{name}`" not in text]
    assert not untold, f"{page} does not name every variable of {kind.__name__}: {untold}"
