"""What every page handler shares: settings, templates, the access cache, and the viewer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import quote

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader, select_autoescape
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from integrations import registry
from resolver.contract.signin import ForgeUnreachableError, Person, SignInError
from resolver.core.logs import redact
from resolver.core.settings import Settings, get_settings
from resolver.onboarding.operator import OPERATOR
from resolver.store import web_sessions
from resolver.store.db import session_scope
from resolver.store.models import utcnow
from resolver.web import steps
from resolver.web.access import AccessCache, Viewer, viewer_of
from resolver.web.inputs import is_web_url
from resolver.web.session import SignedIn, csrf_token, lifetimes, signed_in

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

HERE = Path(__file__).parent
P = ParamSpec("P")
T = TypeVar("T")


async def in_transaction(
    work: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """`work(session, ...)` in the threadpool, in the request's one transaction: the only place
    a page opens one. Committed when `work` returns, rolled back when it raises; `work` ends a
    step (`store.db.end_step`) where it must commit before going on."""

    def run() -> T:
        with session_scope() as session:
            return work(session, *args, **kwargs)

    return await run_in_threadpool(run)


def _finalize(value: object) -> object:
    # Every value a template prints passes here: the stored record is redacted already, and
    # this masks any secret this process knows, or shaped like a token, once more. Markup is
    # a macro's output, whose values passed here one by one.
    return redact(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _provider_templates() -> PrefixLoader:
    """Each provider's own templates (its /setup section and pages), as `<provider>/<file>`."""
    found = {}
    for provider in registry.installed():
        folder = provider.setup().templates if provider.setup is not None else None
        if folder is not None:
            found[provider.name] = FileSystemLoader(folder)
    return PrefixLoader(found)


def build_templates() -> Jinja2Templates:
    env = Environment(
        loader=ChoiceLoader([FileSystemLoader(HERE / "templates"), _provider_templates()]),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        # The templates ship with the code: no stat() of each one per include.
        auto_reload=False,
    )
    env.globals["money"] = steps.money
    env.tests["web_url"] = is_web_url
    env.globals["link"] = env.get_template("_link.html").module.link  # type: ignore[attr-defined]
    return Jinja2Templates(env=env)


@dataclass
class Web:
    templates: Jinja2Templates = field(default_factory=build_templates)
    cache: AccessCache = field(default_factory=AccessCache)

    @property
    def settings(self) -> Settings:
        """Read afresh: `/setup` stores app credentials and secrets in the vault while the
        app runs, and the next request must see them."""
        return get_settings()


def web_of(request: Request) -> Web:
    found: Web = request.app.state.web
    return found


async def current_viewer(request: Request) -> Viewer | None:
    """Who signed in, with their Resolver user and admin flag; None when nobody did, or their
    session ended (the cookie is then cleared). An admin's forge token is checked again once
    `access_cache_seconds` have passed, as a reader's is by their access checks."""
    web = web_of(request)
    found = signed_in(request, web.settings)
    if found is None:
        return None
    loaded = await run_in_threadpool(_load_viewer, found, web.settings)
    if loaded is None:
        _ended(request, "Your sign-in has ended; please sign in again.")
        return None
    viewer, live = loaded
    if _token_due(viewer, live, web.settings) and not await run_in_threadpool(
        _token_holds, viewer, live, web.settings
    ):
        await _refused(request, viewer.person)
        return None
    return viewer


def _load_viewer(found: SignedIn, settings: Settings) -> tuple[Viewer, web_sessions.Live] | None:
    with session_scope() as session:
        live = web_sessions.find(session, found.key, utcnow(), lifetimes(settings))
        person = found.person
        if live is None or (live.provider, live.external_id) != (
            person.provider,
            person.external_id,
        ):
            return None
        return viewer_of(session, person, found.token, settings), live


def _token_due(viewer: Viewer, live: web_sessions.Live, settings: Settings) -> bool:
    # The operator's session has no forge token: its own lifetime bounds it.
    if not viewer.admin or viewer.person.provider == OPERATOR:
        return False
    return utcnow() - live.checked_at >= timedelta(seconds=settings.access_cache_seconds)


def _token_holds(viewer: Viewer, live: web_sessions.Live, settings: Settings) -> bool:
    """Whether the forge still accepts the viewer's token; an unreachable forge proves
    nothing either way, so the session goes on and is checked again at its next page."""
    person = viewer.person
    forge = registry.find(person.provider)
    sign_in = forge.sign_in if forge is not None else None
    try:
        if sign_in is None:
            return False
        whose = sign_in.person(settings, viewer.token)
        if (whose.provider, whose.external_id) != (person.provider, person.external_id):
            return False
    except SignInError:
        return False
    except ForgeUnreachableError:
        return True
    with session_scope() as session:
        web_sessions.token_checked(session, live.id, utcnow())
    return True


def _ended(request: Request, message: str) -> None:
    request.session.clear()
    request.session["flash"] = message


async def end_everywhere(person: Person) -> None:
    """End every session of `person` (`web_sessions.end_everywhere`)."""

    def end() -> None:
        with session_scope() as session:
            web_sessions.end_everywhere(session, person.provider, person.external_id)

    await run_in_threadpool(end)


async def _refused(request: Request, person: Person) -> None:
    await end_everywhere(person)
    _ended(request, "Your sign-in has expired; please sign in again.")


def to_signin(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/signin?next={quote(target, safe='')}", status_code=303)


def page(
    request: Request, name: str, viewer: Viewer | None, status_code: int = 200, **context: Any
) -> Response:
    flash = request.session.pop("flash", None)
    values = {"viewer": viewer, "csrf": csrf_token(request), "flash": flash, **context}
    return web_of(request).templates.TemplateResponse(
        request, name, values, status_code=status_code
    )


def not_found(request: Request, viewer: Viewer | None) -> Response:
    return page(
        request,
        "error.html",
        viewer,
        status_code=404,
        heading="Not found",
        message="There is nothing here, or nothing you may see.",
    )


def bad_request(request: Request, viewer: Viewer | None, message: str) -> Response:
    return page(request, "error.html", viewer, 400, heading="Bad request", message=message)


def unreachable(request: Request, viewer: Viewer, error: Exception) -> Response:
    """The forge did not answer who may see what, so nothing is shown."""
    return page(
        request,
        "error.html",
        viewer,
        status_code=503,
        heading="Try again shortly",
        message=f"{error}. Who may see what is decided by the forge, so nothing is shown.",
    )


async def signed_out(request: Request) -> Response:
    """The forge no longer accepts the viewer's token: every session of theirs ends, and this
    one starts over at sign-in."""
    found = signed_in(request, web_of(request).settings)
    if found is not None:
        await _refused(request, found.person)
    else:
        _ended(request, "Your sign-in has expired; please sign in again.")
    return to_signin(request)
