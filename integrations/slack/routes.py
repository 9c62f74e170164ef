"""Slack events we act on, the ones we deliberately ignore, and their handlers."""

from __future__ import annotations

import re
from typing import Any, Final

from integrations.slack.events import EventCallback, UrlVerification, mentioned_ids, plain_text
from resolver.contract.inbound import Challenge, Policy, Route, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.triggers import ChatThread

_OPTION = re.compile(r"(?<!\S)(repo|branch)=(\S+)")
_VALID = {
    "repo": re.compile(r"^[\w.-]+(?:/[\w.-]+)+$"),
    "branch": re.compile(r"^(?!.*\.\.)[\w./-]+$"),
}


def on_url_verification(event: UrlVerification, policy: Policy) -> Challenge:
    """Slack checks the Request URL; the challenge is answered only once signed."""
    return Challenge(event.challenge)


def on_app_mention(event: EventCallback, policy: Policy) -> Trigger | None:
    """`@bot …` in a channel or a thread."""
    message = event.event
    # Slack says the bot is mentioned; when it does not say who the bot is, any mention counts.
    bot_ids = event.bot_user_ids() or mentioned_ids(message.text)
    if message.user in bot_ids:
        return None
    request = mentions(plain_text(message.text, bot_ids, policy.bot_name), policy.bot_name)
    return None if request is None else _trigger(event, request, followup_only=False)


def on_message(event: EventCallback, policy: Policy) -> Trigger | None:
    """A plain reply in a thread: a follow-up if the bot already has a job there."""
    message = event.event
    bot_ids = event.bot_user_ids()
    if not message.thread_ts or message.thread_ts == message.ts or message.user in bot_ids:
        return None
    text = plain_text(message.text, bot_ids, policy.bot_name)
    if mentions(text, policy.bot_name) is not None:
        return None  # the app_mention event for the same message starts that job
    return _trigger(event, text.strip(), followup_only=True)


def parse_options(request: str) -> tuple[str, dict[str, str]]:
    """Split inline `repo=owner/name` and `branch=name` options from the request text."""
    options: dict[str, str] = {}

    def take(found: re.Match[str]) -> str:
        name, value = found.group(1), found.group(2)
        if name in options or not _VALID[name].match(value):
            return found.group(0)
        options[name] = value
        return ""

    text = _OPTION.sub(take, request)
    return re.sub(r"[ \t]{2,}", " ", text).strip(), options


def _trigger(event: EventCallback, request: str, *, followup_only: bool) -> Trigger:
    message = event.event
    task, options = parse_options(request)
    thread = message.thread_ts or message.ts
    subject = ChatThread(
        options=options,
        part={
            "channel": message.channel,
            "channel_type": message.channel_type,
            "thread_ts": thread,
            "ts": message.ts,
        },
        reach={"team_id": event.team()},
    )
    return Trigger(
        task=task,
        sender=event.sender(),
        conversation_key=f"slack:{event.team()}:{message.channel}:{thread}",
        repo=options.get("repo"),
        subject=subject,
        followup_only=followup_only,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "url_verification": Route(UrlVerification, on_url_verification),
    "app_mention": Route(EventCallback, on_app_mention),
    "message": Route(EventCallback, on_message),
    "message.thread_broadcast": Route(EventCallback, on_message),
    "message.file_share": Route(EventCallback, on_message),
}

IGNORED: Final = frozenset(
    {
        "app_rate_limited",
        "message.message_changed",
        "message.message_deleted",
        "message.message_replied",
        "message.bot_message",
        "message.channel_join",
        "message.channel_leave",
        "message.me_message",
        "reaction_added",
        "reaction_removed",
        "member_joined_channel",
        "app_home_opened",
        "app_uninstalled",
        "tokens_revoked",
    }
)
