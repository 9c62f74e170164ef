"""The README's settings tables, from core.settings.Settings and, under each installed
provider, its own settings class (`integrations/<name>/settings.py`): `--write` updates
README.md."""

import re
import sys
from pathlib import Path

from pydantic.fields import FieldInfo

from integrations import registry
from resolver.core.settings import Settings

README = Path(__file__).resolve().parent.parent / "README.md"
MARKERS = re.compile(r"<!-- settings:start -->.*<!-- settings:end -->", re.S)
HEAD = ["| Setting | Default | Meaning |", "|---|---|---|"]


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
        rows += ["", f"**{provider.display_name}** (`{kind.__name__}`, `{where}`)", "", *HEAD]
        rows += [_row(kind.variable(name), field) for name, field in kind.model_fields.items()]
    return "\n".join(rows)


def write() -> None:
    block = f"<!-- settings:start -->\n{render()}\n<!-- settings:end -->"
    README.write_text(MARKERS.sub(lambda _m: block, README.read_text()))


if __name__ == "__main__":
    write() if "--write" in sys.argv else print(render())
