"""The site's settings reference (`docs/reference/settings.md`), from core.settings.Settings
and, under each installed provider, its own settings class (`integrations/<name>/settings.py`):
`--write` updates the page; scripts/reference.py writes it with the other reference pages."""

import sys
from pathlib import Path

from pydantic.fields import FieldInfo

from integrations import registry
from resolver.core.settings import Settings

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "settings.md"
HEAD = ["| Setting | Default | Meaning |", "|---|---|---|"]
INTRO = """# Settings

Every setting, read from the environment or from `.env`, with its default and meaning. The
service's own come from `resolver/core/settings/` (`Settings`, its fields grouped by concern);
each provider's from its `integrations/<name>/settings.py` (prefix `RESOLVER_<NAME>_`). See
[Configuration](../operating/configuration.md) for how they are read and checked.

## Service
"""


def _row(variable: str, field: FieldInfo) -> str:
    default = "required" if field.is_required() else repr(field.default)
    default = default.replace("PosixPath", "").replace("|", "\\|")
    return f"| `{variable}` | `{default}` | {field.description or ''} |"


def render() -> str:
    rows = [*HEAD]
    for name, field in Settings.model_fields.items():
        rows.append(_row(f"RESOLVER_{name.upper()}", field))
    for provider in registry.installed():
        kind = provider.settings
        where = f"integrations/{provider.name}/settings.py"
        rows += ["", f"## {provider.display_name}", "", f"`{kind.__name__}` in `{where}`."]
        rows += ["", *HEAD]
        rows += [_row(kind.variable(name), field) for name, field in kind.model_fields.items()]
    return "\n".join(rows)


def page() -> str:
    return f"{INTRO}\n{render()}\n"


def write() -> None:
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(page())


if __name__ == "__main__":
    write() if "--write" in sys.argv else print(page())
