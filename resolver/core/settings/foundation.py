"""The service's foundation settings: its database, broker, keys, admins, web sign-ins and logs."""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

VAR_DIR = Path("var")


class FoundationFields(BaseModel):
    """Foundation: the database, the broker, the keys, the admins, web sign-ins and logs."""

    database_url: str = Field(
        default=f"sqlite:///{VAR_DIR}/resolver.db",
        description="SQLAlchemy URL. SQLite is the embedded default; PostgreSQL for production.",
    )
    redis_url: str = Field(
        default="redis://127.0.0.1:6379/0", description="Celery broker and result backend."
    )
    secret_keys: SecretStr = Field(
        description="Comma-separated Fernet keys. The first encrypts; all of them decrypt.",
    )
    bot_name: str = Field(default="resolver", description="The @handle users mention.")
    admin_token: SecretStr | None = Field(
        default=None, description="Bearer token for the JSON API (`/api/jobs`)."
    )
    public_url: str = Field(
        default="http://127.0.0.1:8000", description="Base URL used in links to jobs."
    )
    admins: str = Field(
        default="",
        description=(
            "Web app admins, comma-separated forge accounts by numeric id (`forge:id:NUMBER`, "
            "the forge named as in its webhook path); a login or a user name is refused. Resolver "
            "users are made admins with `resolver users add --admin`."
        ),
    )
    session_hours: float = Field(
        default=12.0, gt=0, description="How long a web sign-in lasts, hours, from signing in."
    )
    session_idle_minutes: float = Field(
        default=120.0, gt=0, description="A web sign-in ends after this many minutes unused."
    )
    link_hours: float = Field(
        default=24.0, gt=0, description="How long the link in an unlinked sender's notice works."
    )
    linked_request_seconds: float = Field(
        default=3600.0,
        ge=0,
        description="After linking, the request behind the notice runs if it is this recent.",
    )
    access_cache_seconds: float = Field(
        default=60.0,
        ge=0,
        description="How long the web app trusts a forge's answer on who may read a repository.",
    )
    log_level: str = Field(default="INFO", description="Python log level.")
    log_format: Literal["text", "json"] = Field(default="text", description="Log line format.")

    @field_validator("secret_keys")
    @classmethod
    def _valid_fernet_keys(cls, value: SecretStr) -> SecretStr:
        keys = [k.strip() for k in value.get_secret_value().split(",") if k.strip()]
        if not keys:
            raise ValueError("no key given")
        for key in keys:
            try:
                raw = base64.urlsafe_b64decode(key.encode())
            except (binascii.Error, ValueError):
                raw = b""
            if len(raw) != 32:
                raise ValueError("each key must be 32 url-safe base64-encoded bytes (a Fernet key)")
        return value

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        if not value.startswith(("sqlite", "postgresql")):
            raise ValueError("only sqlite:// and postgresql:// URLs are supported")
        return value

    @field_validator("admins")
    @classmethod
    def _admins_by_id(cls, value: str) -> str:
        for entry in _entries(value):
            admin_id(entry)
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return value

    @property
    def fernet_keys(self) -> list[str]:
        """The vault's keys, newest first."""
        return [k.strip() for k in self.secret_keys.get_secret_value().split(",") if k.strip()]

    @property
    def admin_ids(self) -> frozenset[tuple[str, str]]:
        """RESOLVER_ADMINS as (provider, numeric id) pairs."""
        return frozenset(admin_id(entry) for entry in _entries(self.admins))


_ADMIN_ID = re.compile(r"([a-z][a-z0-9_-]*):id:([0-9]{1,20})")


def _entries(value: str) -> list[str]:
    return [entry.strip() for entry in value.split(",") if entry.strip()]


def admin_id(entry: str) -> tuple[str, str]:
    """A RESOLVER_ADMINS entry, `provider:id:NUMBER`, as (provider, id). A login can be renamed
    and then taken by someone else, and a user name can be claimed by whoever links first, so
    neither names an admin: such an entry is refused, not guessed at."""
    found = _ADMIN_ID.fullmatch(entry.lower())
    if found is None:
        provider = entry.partition(":")[0].strip().lower() if ":" in entry else "provider"
        raise ValueError(
            f"{entry!r} is not a forge account's numeric id; write {provider}:id:NUMBER "
            "(the number the forge's API gives the account)"
        )
    return found.group(1), str(int(found.group(2)))
