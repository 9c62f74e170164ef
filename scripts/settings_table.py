"""Print the README's settings table from resolver.config.Settings (run after adding a setting)."""

from resolver.config import Settings


def render() -> str:
    rows = ["| Setting | Default | Meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = "required" if field.is_required() else repr(field.default)
        default = default.replace("PosixPath", "").replace("|", "\\|")
        rows.append(f"| `RESOLVER_{name.upper()}` | `{default}` | {field.description or ''} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(render())
