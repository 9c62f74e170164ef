"""What Resolver's Slack app needs, named once: the manifest `/setup` creates through
`apps.manifest.create` and the preflight check of the granted scopes both read it. Exactly what
the README lists, no more. https://api.slack.com/reference/manifests
"""

from __future__ import annotations

from typing import Final

BOT_SCOPES: Final[tuple[str, ...]] = (
    "app_mentions:read",  # the app_mention event
    "chat:write",  # the status reply, updated in place, and the private link to unlinked people
    "reactions:write",  # the 👀
    "channels:history",  # the thread as context, and follow-ups in public channels
    "groups:history",  # the same in private channels
)

BOT_EVENTS: Final[tuple[str, ...]] = (
    "app_mention",
    "message.channels",
    "message.groups",
)
"""The Events API subscriptions: those `routes.ROUTES` acts on."""
