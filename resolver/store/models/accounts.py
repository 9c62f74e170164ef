"""People and what proves them: users, their linked identities, installations, encrypted
credentials, settings stored by the web app, web sessions and used sign-in links."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    CheckConstraint,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from resolver.store.models.base import Base, utcnow


class User(Base):
    """A person. Names are unique whatever their case (`users_name_folded`), so a name never
    stands for two people; who is an admin is `is_admin`, never a name."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    is_admin: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    identities: Mapped[list[Identity]] = relationship(back_populates="user")


Index("users_name_folded", func.lower(User.name), unique=True)


class Identity(Base):
    """A provider account (GitHub login, Slack TEAM:USER, …) that belongs to a user."""

    __tablename__ = "identities"
    __table_args__ = (UniqueConstraint("provider", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str] = mapped_column(String(200))
    login: Mapped[str | None] = mapped_column(String(200), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When its owner last signed in to the web app with it (None: never since linking).
    signed_in_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(back_populates="identities")


class Installation(Base):
    """A GitHub App installation, Slack team, Jira site, Linear organisation or GitLab instance."""

    __tablename__ = "installations"
    __table_args__ = (UniqueConstraint("provider", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str] = mapped_column(String(200))
    name: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Credential(Base):
    """An encrypted secret. `ciphertext` is a Fernet token; the plaintext is never stored."""

    __tablename__ = "credentials"
    __table_args__ = (
        CheckConstraint(
            "(user_id IS NULL) <> (installation_id IS NULL)", name="credential_has_one_owner"
        ),
        # One credential per owner, provider and kind: what a store replaces (its upsert's
        # key). A NULL owner column never clashes, so each key holds for its kind of owner.
        Index("credentials_one_per_user", "user_id", "provider", "kind", unique=True),
        Index(
            "credentials_one_per_installation", "installation_id", "provider", "kind", unique=True
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(20))
    scope: Mapped[str | None] = mapped_column(String(500))
    # The only origin (scheme://host[:port]) it may be sent to: an MCP server's credential.
    # None on a row stored before origins were: such a credential is not sent.
    origin: Mapped[str | None] = mapped_column(String(300))
    ciphertext: Mapped[str] = mapped_column(Text)
    refresh_ciphertext: Mapped[str | None] = mapped_column(Text)
    expires_at: Mapped[datetime | None]
    # When the forge refused it (a 401, or its refresh token refused): sign in again.
    revoked_at: Mapped[datetime | None]
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    installation_id: Mapped[int | None] = mapped_column(
        ForeignKey("installations.id", ondelete="CASCADE")
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    def __repr__(self) -> str:
        return f"Credential(id={self.id}, provider={self.provider!r}, kind={self.kind!r})"


class StoredSetting(Base):
    """A setting kept in the vault (`/setup`, `resolver setup`): a `Settings` field name and its
    value, encrypted like every credential. The environment wins over it when set."""

    __tablename__ = "stored_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    ciphertext: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class WebSession(Base):
    """A signed-in web session. The browser's cookie carries a random key; only its SHA-256 is
    stored, so reading this table gives no live cookie. Deleting the row signs the cookie out."""

    __tablename__ = "web_sessions"
    __table_args__ = (Index("ix_web_sessions_person", "provider", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    provider: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str] = mapped_column(String(200))
    # Sign-in: the absolute lifetime counts from here, across rotations of the key.
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The idle timeout counts from here; written at most once a `store.web_sessions.TOUCH`.
    seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When the forge last accepted the session's token (admins' pages check it again).
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)


class UsedLink(Base):
    """A one-time link (the operator's, an account link) that was used, kept until it expires."""

    __tablename__ = "used_links"

    key_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime]
