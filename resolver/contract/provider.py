"""One provider, described once: its webhook side, its reply side, and what the rest of
Resolver needs to know about it. `integrations/registry.py` lists the installed ones; nothing
outside `integrations/` names a provider. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from resolver.contract.checks import Preflight
from resolver.contract.ci import CIReport, FailedCheck
from resolver.contract.inbound import Integration
from resolver.contract.outbound import Conversation, Forge, ForgeUser, PullInfo
from resolver.contract.setup import AppFromManifest, ProviderSetup
from resolver.contract.signin import IdentityProof, SignIn
from resolver.contract.triggers import TaskTrigger

# Both factories take the job's trigger and the requester's user id (for user tokens).
ConversationFactory = Callable[[TaskTrigger, int | None], Conversation]
ForgeFactory = Callable[[TaskTrigger, int | None], Forge]

ConversationKind = Literal["issue", "thread", "ticket"]
# The job's trigger, the requester's user id and the failing check: what the forge says of it.
CIReader = Callable[[TaskTrigger, int | None, FailedCheck], CIReport]
# The job's trigger, the requester's user id, the repository and a base branch: the open
# pull requests into that base (`conflicts: fix`).
PullLister = Callable[[TaskTrigger, int | None, str, str], tuple[PullInfo, ...]]
# The job's trigger, the requester's user id and the thread's `where` (`ReviewThread.where`).
ThreadResolver = Callable[[TaskTrigger, int | None, Mapping[str, JsonValue]], None]
# The job's trigger, the recipient's external id and the text.
PrivatePost = Callable[[TaskTrigger, str, str], None]


@dataclass(frozen=True)
class Provider:
    """An installed provider. A forge (`forge` set) hosts repositories; the others route a
    conversation to a default repository by `route_scope`."""

    name: str
    """Its webhook path (`/webhooks/<name>`), a job's `source` and a linked identity's provider."""
    display_name: str
    integration: Integration
    conversation: ConversationFactory
    forge: ForgeFactory | None = None
    secrets: tuple[str, ...] = ()
    """The settings fields any one of which turns its webhook on (for `resolver doctor`)."""
    kind: ConversationKind = "ticket"
    """What its conversations are, as the agent's prompt names them."""
    route_scope: Callable[[TaskTrigger], str | None] | None = None
    """What a default repository is configured for (a Slack channel, a Jira project)."""
    greets_by_login: bool = True
    """Whether a notice may address the sender as `@login` (Slack mentions by id instead)."""
    pull_word: str = "pull request"
    co_author: Callable[[ForgeUser], tuple[str, str]] | None = None
    """How the forge credits a commit to a person: name and no-reply address."""
    sign_in: SignIn | None = None
    """How people sign in to the web app with it (forges only)."""
    proof: IdentityProof | None = None
    """How people prove they hold an account on it (chats and trackers), to link it."""
    post_private: PrivatePost | None = None
    """Posts text in a trigger's conversation that only the sender (by external id) sees."""
    app_from_manifest: AppFromManifest | None = None
    """How `/setup` creates its app from a manifest (GitHub)."""
    setup: Callable[[], ProviderSetup] | None = None
    """How `/setup` registers its webhook or creates its app (`contract.setup`), loaded on
    first use: no process imports the set-up clients until it sets something up."""
    preflight: Preflight | None = None
    """Its credentials, permissions and webhook, checked (`resolver doctor`, `/setup`)."""

    ci_report: CIReader | None = None
    """Reads a failing check's annotations and the tail of its log (forges with CI)."""
    resolve_thread: ThreadResolver | None = None
    """Marks a review thread resolved, after the bot's reply in it (where the forge allows it
    through its API and the repository through `reviews.resolve_threads`)."""

    open_pulls: PullLister | None = None
    """Lists the open pull requests into a base branch (`conflicts: fix` on a push to it)."""

    @property
    def is_forge(self) -> bool:
        return self.forge is not None
