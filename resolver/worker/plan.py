"""Which repository a request is about (the trigger's own, `repo=`, or a configured route),
and whether its requester may push to it. The route and the requester's account are read in
the caller's session, each read a step of its own (the forge is asked next)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from integrations import registry
from resolver.contract import outbound as providers
from resolver.contract.errors import RouteError
from resolver.contract.triggers import ChatThread, TaskTrigger, repo_of, repository_in
from resolver.core.settings import Settings
from resolver.core.states import Outcome
from resolver.store import accounts
from resolver.store.db import end_step
from resolver.store.repo_defaults import routed_repo
from resolver.worker.values import Plan, Snapshot, Stop

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def is_forge(source: str) -> bool:
    """Whether a job's source hosts repositories itself (a forge), rather than naming one."""
    found = registry.find(source)
    return found is not None and found.is_forge


def route_scope(source: str, trigger: TaskTrigger) -> str | None:
    """What a default repository is configured for (a Slack channel, a Jira project…)."""
    found = registry.find(source)
    scope = found.route_scope if found is not None else None
    return scope(trigger) if scope is not None else None


def co_author(forge_name: str, user: providers.ForgeUser, settings: Settings) -> tuple[str, str]:
    """The requester as the forge credits a commit to them."""
    credit = registry.get(forge_name).co_author
    login = user.login or user.external_id
    return (
        credit(user, settings) if credit is not None else (login, f"{login}@users.noreply.invalid")
    )


def repository_of(session: Session, snapshot: Snapshot) -> tuple[str, str]:
    """The forge and the repository's full name; Stop when the request names none and no
    route is configured. A forge's trigger names its own repository; one that does not (a
    ticket on a forge that also tracks work) routes like a tracker's, on that forge."""
    forge = snapshot.source if is_forge(snapshot.source) else None
    own = repo_of(snapshot.trigger)
    if forge is not None and own:
        return forge, own
    trigger = snapshot.trigger
    spec = trigger.options.get("repo") if isinstance(trigger, ChatThread) else None
    spec = spec or snapshot.repo or _routed_repo(session, snapshot)
    if not spec:
        scope = route_scope(snapshot.source, snapshot.trigger) or "<scope>"
        raise Stop(
            Outcome.COULD_NOT,
            "Which repository should I work on? Mention me again with `repo=owner/name` "
            f"(or `repo=forge:owner/name`), or ask an admin to set a default with "
            f"`resolver routes set {snapshot.source} {scope} owner/name`.",
        )
    try:
        return registry.parse_repo_spec(str(spec), default=forge)
    except RouteError as error:
        raise Stop(Outcome.COULD_NOT, str(error)) from None


def _routed_repo(session: Session, snapshot: Snapshot) -> str | None:
    scope = route_scope(snapshot.source, snapshot.trigger)
    if scope is None:
        return None
    routed = routed_repo(session, snapshot.source, scope)
    end_step(session)
    return routed


def repo_info(
    snapshot: Snapshot, forge: providers.Forge, forge_name: str, full_name: str
) -> providers.RepoInfo:
    """The repository's clone URL and default branch: from the forge's own payload when it
    has them, else asked of the forge."""
    named = repository_in(snapshot.trigger)
    if snapshot.source == forge_name and named and named.clone_url and named.default_branch:
        # The forge's own answer, from the payload: no extra call.
        return providers.RepoInfo(
            full_name=full_name, clone_url=named.clone_url, default_branch=named.default_branch
        )
    return forge.repository(full_name)


def _forge_user(
    session: Session, snapshot: Snapshot, forge_name: str
) -> providers.ForgeUser | None:
    sender = snapshot.trigger.origin.sender
    if snapshot.source == forge_name and sender is not None and sender.id:
        return providers.ForgeUser(sender.id, sender.login or None)
    if snapshot.requester_id is None:
        return None
    identity = accounts.identity_of(session, snapshot.requester_id, forge_name)
    user = providers.ForgeUser(identity.external_id, identity.login) if identity else None
    end_step(session)
    return user


def check_permission(
    session: Session, snapshot: Snapshot, forge: providers.Forge, forge_name: str, full_name: str
) -> providers.ForgeUser:
    """The requester's account on the forge, once it may push to the repository."""
    name = registry.get(forge_name).display_name
    user = _forge_user(session, snapshot, forge_name)
    if user is None:
        raise Stop(
            Outcome.REFUSED,
            f"I need to know your {name} account to check that you may push to `{full_name}`. "
            f"Ask a Resolver admin to run `resolver users link <your-user> --provider "
            f"{forge_name} --external-id <id> --login <login>`, then mention me again.",
        )
    if not forge.can_write(full_name, user):
        who = f"@{user.login}" if user.login else "you"
        raise Stop(
            Outcome.REFUSED,
            f"Sorry {who}, I only take requests from people who can push to `{full_name}`. "
            "Ask a maintainer to mention me, or to give you write access.",
        )
    return user


PlanOf = Callable[[Snapshot, providers.Forge, str, providers.RepoInfo], Plan]
"""A runner's choice of base and branch in the repository (Stop when it will not work there)."""


def prepare(
    session: Session, snapshot: Snapshot, plan_of: PlanOf, settings: Settings
) -> tuple[Plan, providers.ForgeUser, dict[str, str]]:
    """What every run on a forge starts from: the plan `plan_of` makes for the repository,
    the requester (once they may push to it) and the forge's git environment for its clone.
    Stop, or the forge's CallbackError, when it cannot."""
    forge_name, full_name = repository_of(session, snapshot)
    forge = registry.forge(forge_name, snapshot.trigger, snapshot.requester_id, settings)
    repo = repo_info(snapshot, forge, forge_name, full_name)
    requester = check_permission(session, snapshot, forge, forge_name, repo.full_name)
    plan = plan_of(snapshot, forge, forge_name, repo)
    return plan, requester, forge.git_env(plan.repo.clone_url)
