"""Where each setting comes from, for `/setup` and `resolver setup`: the environment (which
wins), the vault, or nowhere. Never its value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from resolver.core.settings import load_settings
from resolver.store import configured

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sqlalchemy.orm import Session

Origin = Literal["environment", "vault", ""]


@dataclass(frozen=True)
class SettingOrigin:
    name: str
    origin: Origin
    also_stored: bool = False
    """Set in the environment and also in the vault: the environment's value is the one used."""

    @property
    def variable(self) -> str:
        return f"RESOLVER_{self.name.upper()}"


def env_set(names: Iterable[str]) -> tuple[str, ...]:
    """Which of `names` the environment (or .env) sets: those win over the vault."""
    from_env = load_settings().names_set()
    return tuple(name for name in names if name in from_env)


def origins(session: Session, names: Iterable[str]) -> list[SettingOrigin]:
    wanted = list(names)
    from_env, stored = set(env_set(wanted)), configured.stored_names(session)
    found = []
    for name in wanted:
        if name in from_env:
            found.append(SettingOrigin(name, "environment", name in stored))
        else:
            found.append(SettingOrigin(name, "vault" if name in stored else ""))
    return found
