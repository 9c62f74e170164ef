"""One provider, described once: its webhook side, its reply side, and what the rest of
Resolver needs to know about it. `integrations/registry.py` lists the installed ones; nothing
outside `integrations/` names a provider. Pure, but for `ImportedOnCall`, which imports a
provider's module when one of its functions is first called."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from resolver.contract.checks import Preflight
from resolver.contract.inbound import Integration
from resolver.contract.outbound import Conversation, Forge, ForgeUser, MessageRef, PullInfo
from resolver.contract.review import ReviewPost
from resolver.contract.setup import ProviderSetup
from resolver.contract.signin import IdentityProof, SignIn
from resolver.contract.triggers import FailedCheck, TaskTrigger
from resolver.core.settings import ProviderSettings, Settings


@dataclass(frozen=True)
class CIReport:
    """What the forge says about the failing check: annotations and the tail of its log."""

    annotations: tuple[str, ...] = ()
    log_tail: str = ""
    log_cut: bool = False
    unavailable: tuple[str, ...] = ()
    """What could not be read, said in the prompt and the status rather than failing the job."""


# Both factories take the job's trigger, the requester's user id (for user tokens) and the
# settings their caller's root read; so do the provider's other functions below.
ConversationFactory = Callable[[TaskTrigger, int | None, Settings], Conversation]
ForgeFactory = Callable[[TaskTrigger, int | None, Settings], Forge]
ConversationKind = Literal["issue", "thread", "ticket"]
# The job's trigger, the requester's user id and the failing check: what the forge says of it.
CIReader = Callable[[TaskTrigger, int | None, FailedCheck, Settings], CIReport]
# The job's trigger, the requester's user id, the repository and a base branch: the open
# pull requests into that base (`conflicts: fix`).
PullLister = Callable[[TaskTrigger, int | None, str, str, Settings], tuple[PullInfo, ...]]
# The job's trigger, the requester's user id and the thread's `where` (`ReviewThread.where`).
ThreadResolver = Callable[[TaskTrigger, int | None, Mapping[str, JsonValue], Settings], None]
# The job's trigger, the requester's user id and the review: posted as one review.
ReviewPoster = Callable[[TaskTrigger, int | None, ReviewPost, Settings], MessageRef]
# The job's trigger, the recipient's external id and the text.
PrivatePost = Callable[[TaskTrigger, str, str, Settings], None]


class ImportedOnCall:
    """A module whose functions are named now and imported on their first call: a provider's
    descriptor names its reply side without loading the clients (the web process never calls
    them). Used as the `else` of an `if TYPE_CHECKING` import of the same module, so mypy
    checks every function against the field it fills."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Callable[..., object]:
        if name.startswith("__"):  # copy, pickle and inspect probe for these
            raise AttributeError(name)
        return _FirstCall(self._module, name)


class _FirstCall:
    """`module:name`, bound on the first call."""

    def __init__(self, module: str, name: str) -> None:
        self._module, self._name = module, name
        self._function: Callable[..., object] | None = None

    def __call__(self, *args: object, **kwargs: object) -> object:
        if self._function is None:
            self._function = getattr(importlib.import_module(self._module), self._name)
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self._module}:{self._name}, imported on first call>"


@dataclass(frozen=True)
class Provider:
    """An installed provider. A forge (`forge` set) hosts repositories; the others route a
    conversation to a default repository by `route_scope`."""

    name: str
    """Its webhook path (`/webhooks/<name>`), a job's `source` and a linked identity's provider."""
    display_name: str
    integration: Integration
    conversation: ConversationFactory
    settings: type[ProviderSettings]
    """Its settings class (`integrations/<name>/settings.py`, prefix `RESOLVER_<NAME>_`): the
    registry composes it into the service's settings, where it reads its section with
    `<Class>.of(settings)`."""
    forge: ForgeFactory | None = None
    secrets: tuple[str, ...] = ()
    """The settings (flat names, `github_webhook_secret`) any one of which turns its webhook on
    (for `resolver doctor`)."""
    kind: ConversationKind = "ticket"
    """What its conversations are, as the agent's prompt names them."""
    route_scope: Callable[[TaskTrigger], str | None] | None = None
    """What a default repository is configured for (a Slack channel, a Jira project)."""
    greets_by_login: bool = True
    """Whether a notice may address the sender as `@login` (Slack mentions by id instead)."""
    pull_word: str = "pull request"
    co_author: Callable[[ForgeUser, Settings], tuple[str, str]] | None = None
    """How the forge credits a commit to a person: name and no-reply address."""
    sign_in: SignIn | None = None
    """How people sign in to the web app with it (forges only)."""
    proof: IdentityProof | None = None
    """How people prove they hold an account on it (chats and trackers), to link it."""
    post_private: PrivatePost | None = None
    """Posts text in a trigger's conversation that only the sender (by external id) sees."""
    setup: Callable[[], ProviderSetup] | None = None
    """What `/setup`, `resolver setup <name>` and `resolver doctor` show and do for it
    (`contract.setup`), loaded on first use: no process imports the set-up clients until it
    sets something up."""
    preflight: Preflight | None = None
    """Its credentials, permissions and webhook, checked (`resolver doctor`, `/setup`)."""

    ci_report: CIReader | None = None
    """Reads a failing check's annotations and the tail of its log (forges with CI)."""
    resolve_thread: ThreadResolver | None = None
    """Marks a review thread resolved, after the bot's reply in it (where the forge allows it
    through its API and the repository through `reviews.resolve_threads`)."""

    open_pulls: PullLister | None = None
    """Lists the open pull requests into a base branch (`conflicts: fix` on a push to it)."""

    post_review: ReviewPoster | None = None
    """Posts a review of a pull request (`@bot review`): the summary, the verdict and the
    comments anchored to lines of its diff, in one review where the forge has one."""

    warm: Callable[[], None] | None = None
    """Loads what its first callback would (its client, a library's lazily loaded modules),
    without a network call: a callbacks worker calls it as it starts, so that the first 👀
    after a start does not wait for imports."""

    @property
    def is_forge(self) -> bool:
        return self.forge is not None
