"""The README's settings table, from core.settings.Settings: `--write` updates README.md. Each
provider's own settings (`integrations/<name>/settings.py`) are on its page,
`integrations/<name>/README.md`, which tests/integrations/test_readmes.py checks, so installing
a provider changes nothing here."""

import re
import sys
from pathlib import Path

from pydantic.fields import FieldInfo

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
    return "\n".join(rows)


def write() -> None:
    block = f"<!-- settings:start -->\n{render()}\n<!-- settings:end -->"
    README.write_text(MARKERS.sub(lambda _m: block, README.read_text()))


if __name__ == "__main__":
    write() if "--write" in sys.argv else print(render())
