"""A repository's YAML file (its `.resolver/config.yml`, its schedules) read as data. Pure.

The repository is hostile. Anchors and aliases are refused: `safe_load` shares an alias's value
rather than copying it, but every message that prints that value expands it (500 bytes of
nested aliases made one of 700 million characters). Nesting is bounded (a thousand brackets
overflowed the parser's stack) and the file's size capped; libyaml's loader reads it.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

MAX_BYTES: Final = 256 * 1024
"""A config or schedules file larger than this is refused: none needs a tenth of it."""
MAX_DEPTH: Final = 32
"""The deepest nesting of lists and mappings a file may have."""
_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN: Final = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE: Final = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class RepoYamlError(ValueError):
    """The file cannot be read as plain YAML data; the message says why, for its author."""


def load_yaml(text: str, name: str) -> Any:
    """`text` (the file `name`) as plain data: scalars, lists and mappings."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise RepoYamlError(f"{name} is larger than {MAX_BYTES // 1024} KB")
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise RepoYamlError(f"{name}: anchors and aliases (`&`, `*`) are not supported")
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise RepoYamlError(f"{name} is nested more than {MAX_DEPTH} levels deep")
            elif isinstance(event, _CLOSE):
                depth -= 1
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as error:
        raise RepoYamlError(f"{name} is not valid YAML: {error}") from None
