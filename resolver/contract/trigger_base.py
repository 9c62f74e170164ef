"""What a stored trigger's readers share: its JSON shape's version and type, and the error for a
row that fits no kind. Pure."""

from __future__ import annotations

from typing import Final, TypeAlias

from pydantic import JsonValue

VERSION: Final = 1
JsonObject: TypeAlias = dict[str, JsonValue]


class TriggerError(ValueError):
    """A stored trigger that fits no kind."""
