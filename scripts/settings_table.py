"""The README's settings table, from core.settings.Settings: `--write` updates README.md."""

import re
import sys
from pathlib import Path

from resolver.core.settings import Settings

README = Path(__file__).resolve().parent.parent / "README.md"
MARKERS = re.compile(r"<!-- settings:start -->.*<!-- settings:end -->", re.S)


def render() -> str:
    rows = ["| Setting | Default | Meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = "required" if field.is_required() else repr(field.default)
        default = default.replace("PosixPath", "").replace("|", "\\|")
        rows.append(f"| `RESOLVER_{name.upper()}` | `{default}` | {field.description or ''} |")
    return "\n".join(rows)


def write() -> None:
    block = f"<!-- settings:start -->\n{render()}\n<!-- settings:end -->"
    README.write_text(MARKERS.sub(lambda _m: block, README.read_text()))


if __name__ == "__main__":
    write() if "--write" in sys.argv else print(render())
