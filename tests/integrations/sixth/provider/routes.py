"""Sixth events we act on (a new message mentioning the bot), and the ones we ignore."""

from __future__ import annotations

from typing import Any, Final

from resolver.contract.inbound import Policy, Route, Sender, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.triggers import ChatThread
from tests.integrations.sixth.provider.events import MessageCreated


def on_message_created(event: MessageCreated, policy: Policy) -> Trigger | None:
    """A message that mentions the bot asks for what follows the mention; the answer goes to
    the message's thread."""
    message = event.message
    request = mentions(message.text, policy.bot_name)
    if request is None:
        return None
    author = message.author
    thread = message.thread or message.id
    return Trigger(
        task=request,
        sender=Sender(author.id, login=author.handle, is_bot=author.bot),
        conversation_key=f"sixth:{event.workspace}:{message.channel}:{thread}",
        subject=ChatThread(
            title="",
            body=message.text,
            part={
                "workspace": event.workspace,
                "channel": message.channel,
                "thread": thread,
                "message_id": message.id,
            },
        ),
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "message.created": Route(MessageCreated, on_message_created),
}

IGNORED: Final = frozenset({"message.updated", "message.deleted", "reaction.added"})
