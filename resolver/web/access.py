"""Who is looking, and what they may see and do. A job is seen by admins, its requester, and
anyone whose own forge token can read its repository; it is stopped or run again by admins,
its requester, and anyone who may push there. Everyone else is told it does not exist."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from integrations import registry
from resolver.contract.errors import RouteError
from resolver.contract.signin import NO_ACCESS, Person, RepoAccess
from resolver.contract.triggers import ScheduleRun, TaskTrigger, read_trigger, repo_of
from resolver.core.settings import Settings
from resolver.onboarding.operator import OPERATOR
from resolver.store import accounts
from resolver.store.browse import Visible, repo_pairs
from resolver.store.models import Job

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

MAX_CACHED = 50_000
ACCESS_CHECKS_AT_ONCE = 8
# A repository's first job shows in a reader's list within this many seconds (their own at once).
PAIRS_SECONDS = 5.0


@dataclass(frozen=True)
class Viewer:
    person: Person
    token: str
    user_id: int | None
    name: str | None
    """Their Resolver user, when their forge account is linked to one."""
    admin: bool

    @property
    def label(self) -> str:
        return f"{self.person.login} ({self.person.provider})"

    @property
    def account(self) -> str:
        """The forge account they signed in with, by its stable id (`github:id:583231`)."""
        return f"{self.person.provider}:id:{self.person.external_id}"


def viewer_of(session: Session, person: Person, token: str, settings: Settings) -> Viewer:
    """Who signed in, by stable ids only: an admin is the operator, a forge account whose
    numeric id RESOLVER_ADMINS names, or a user marked admin. Logins and names count for
    nothing here; a login can be renamed and taken, and a name claimed by whoever links."""
    identity = accounts.find_identity(session, person.provider, external_id=person.external_id)
    user = identity.user if identity is not None else None
    operator = person.provider == OPERATOR  # opened with `resolver setup url`
    admin = (
        operator
        or (person.provider, person.external_id) in settings.admin_ids
        or (user is not None and user.is_admin)
    )
    return Viewer(
        person, token, user.id if user else None, user.name if user else None, bool(admin)
    )


class AccessCache:
    """The forge's answers on a viewer's access, kept `access_cache_seconds`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, str, str], tuple[float, RepoAccess]] = {}
        self._pairs: tuple[float, list[tuple[str, str]]] | None = None

    def access(self, viewer: Viewer, forge: str, repo: str, settings: Settings) -> RepoAccess:
        if forge != viewer.person.provider:
            return NO_ACCESS  # their token speaks for them on their own forge only
        key = (forge, viewer.person.external_id, repo.lower())
        now = time.monotonic()
        with self._lock:
            found = self._answers.get(key)
        if found is not None and found[0] > now:
            return found[1]
        sign_in = registry.get(forge).sign_in
        answer = NO_ACCESS if sign_in is None else sign_in.access(settings, viewer.token, repo)
        with self._lock:
            if len(self._answers) >= MAX_CACHED:
                self._answers.clear()
            self._answers[key] = (now + settings.access_cache_seconds, answer)
        return answer

    def pairs(self, session: Session) -> list[tuple[str, str]]:
        """Every (source, repository) jobs name, read again after `PAIRS_SECONDS`: the query
        reads every job, and a list page for a reader needs it each time."""
        now = time.monotonic()
        with self._lock:
            found = self._pairs
        if found is not None and found[0] > now:
            return found[1]
        pairs = repo_pairs(session)
        with self._lock:
            self._pairs = (now + PAIRS_SECONDS, pairs)
        return pairs


def job_repository(job: Job) -> tuple[str, str] | None:
    """The forge and repository a job works on, as far as it is known."""
    trigger = read_trigger(job.trigger)
    planned = trigger.planned
    if planned is not None and planned.provider and planned.repo:
        return planned.provider, planned.repo
    return pair_repository(job.source, job.repo, trigger)


def pair_repository(
    source: str, repo: str | None, trigger: TaskTrigger | None = None
) -> tuple[str, str] | None:
    if source in registry.forge_names() and repo:
        return source, (repo_of(trigger) if trigger else None) or repo
    if isinstance(trigger, ScheduleRun) and trigger.forge_name and repo:
        return trigger.forge_name, repo
    if not repo:
        return None
    try:
        return registry.parse_repo_spec(repo)
    except RouteError:
        return None


def can_see(viewer: Viewer, job: Job, cache: AccessCache, settings: Settings) -> bool:
    if viewer.admin or (viewer.user_id is not None and job.requester_id == viewer.user_id):
        return True
    where = job_repository(job)
    return where is not None and cache.access(viewer, *where, settings).read


def can_act(viewer: Viewer, job: Job, cache: AccessCache, settings: Settings) -> bool:
    """Stop or run again: admins, the requester, and whoever may push to the repository."""
    if viewer.admin or (viewer.user_id is not None and job.requester_id == viewer.user_id):
        return True
    where = job_repository(job)
    return where is not None and cache.access(viewer, *where, settings).push


def visible_to(
    session: Session, viewer: Viewer, cache: AccessCache, settings: Settings
) -> Visible | None:
    """The list's filter for `viewer` (None: everything, for an admin)."""
    if viewer.admin:
        return None
    readable = _readable(cache.pairs(session), viewer, cache, settings)
    return Visible(viewer.user_id, frozenset(readable))


def _readable(
    pairs: Iterable[tuple[str, str]], viewer: Viewer, cache: AccessCache, settings: Settings
) -> list[tuple[str, str]]:
    """The pairs whose repository the viewer can read; the forge is asked about several at
    once, since a first visit may need an answer for each repository."""
    located = [(pair, pair_repository(*pair)) for pair in pairs]
    wanted = [(pair, where) for pair, where in located if where is not None]

    def readable(where: tuple[str, str]) -> bool:
        return cache.access(viewer, *where, settings).read

    with ThreadPoolExecutor(max_workers=ACCESS_CHECKS_AT_ONCE) as pool:
        answers = list(pool.map(readable, [where for _, where in wanted]))
    return [pair for (pair, _), ok in zip(wanted, answers, strict=True) if ok]
