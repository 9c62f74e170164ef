"""The Slack stand-in's workspace: who each token acts as, its channels and their messages, and
the shape of a method call (its arguments and caller in, Slack's `ok` document out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TEAM_ID = "T0TEAM"


@dataclass(frozen=True)
class Identity:
    """Who a token acts as: a bot user (with its bot id) or a person."""

    user_id: str
    name: str
    team_id: str = TEAM_ID
    bot_id: str | None = None


@dataclass
class Message:
    ts: str
    text: str
    user: str
    bot_id: str | None = None
    thread_ts: str | None = None
    reactions: dict[str, list[str]] = field(default_factory=dict)
    edited_ts: str | None = None
    metadata: dict[str, Any] | None = None  # {"event_type": …, "event_payload": {…}}


@dataclass(frozen=True)
class Ephemeral:
    """A message only `user` saw: Slack keeps no copy, and no method reads it back."""

    user: str
    message: Message


@dataclass
class Channel:
    id: str
    member: bool = True
    archived: bool = False
    messages: dict[str, Message] = field(default_factory=dict)
    members: set[str] | None = None  # None: everyone is a member
    ephemeral: list[Ephemeral] = field(default_factory=list)


@dataclass(frozen=True)
class Call:
    params: dict[str, Any]
    caller: Identity


Answer = tuple[int, dict[str, Any]]


def ok(**fields: Any) -> Answer:
    return 200, {"ok": True, **fields}


def error(code: str) -> Answer:
    return 200, {"ok": False, "error": code}
