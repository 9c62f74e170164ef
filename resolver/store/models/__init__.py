"""Database tables (SQLAlchemy 2), by what they keep. Migrations in resolver/store/migrations
mirror these."""

from __future__ import annotations

from resolver.store.models.accounts import (
    Credential,
    Identity,
    Installation,
    StoredSetting,
    UsedLink,
    User,
    WebSession,
)
from resolver.store.models.base import Base, UTCDateTime, utcnow
from resolver.store.models.jobs import (
    Callback,
    CallbackAttempt,
    Delivery,
    Job,
    JobEvent,
    Notice,
    SteeringMessage,
)
from resolver.store.models.repos import (
    BotPull,
    CIAttempt,
    RepoOptions,
    RepoRoute,
    Schedule,
    ScheduleRepo,
    ScheduleRun,
)

__all__ = [
    "Base",
    "BotPull",
    "CIAttempt",
    "Callback",
    "CallbackAttempt",
    "Credential",
    "Delivery",
    "Identity",
    "Installation",
    "Job",
    "JobEvent",
    "Notice",
    "RepoOptions",
    "RepoRoute",
    "Schedule",
    "ScheduleRepo",
    "ScheduleRun",
    "SteeringMessage",
    "StoredSetting",
    "UTCDateTime",
    "UsedLink",
    "User",
    "WebSession",
    "utcnow",
]
