"""Who looks at the pages: session cookies made as the web app's own sign-in would leave them
(each with its server-side session), and a local GitHub that knows both viewers' tokens: the web
app asks it what the reader may read, and whether the admin's token still holds."""

from __future__ import annotations

import json
from base64 import b64encode
from dataclasses import dataclass

from itsdangerous import TimestampSigner

from integrations.github.standin.api import GitHubAPI
from resolver.core.settings import Settings
from resolver.store import web_sessions
from resolver.store.db import session_scope
from resolver.store.models import utcnow
from resolver.store.vault import Vault
from resolver.web.session import COOKIE, session_secret


@dataclass(frozen=True)
class Viewer:
    label: str
    login: str
    external_id: str
    token: str


ADMIN = Viewer("admin", "bench", "1", "gho_benchtoken")
READER = Viewer("reader", "reader", "2", "gho_benchreader")
ADMINS = f"github:id:{ADMIN.external_id}"


def session_cookie(settings: Settings, viewer: Viewer) -> str:
    """The `Cookie` header of a browser `viewer` signed in with: the session `sign_in` writes,
    encoded and signed as Starlette's SessionMiddleware encodes and signs it."""
    with session_scope() as db:
        key = web_sessions.open_session(db, "github", viewer.external_id, utcnow())
    session = {
        "who": {"p": "github", "id": viewer.external_id, "l": viewer.login},
        "tok": Vault(settings.fernet_keys).encrypt(viewer.token),
        "sid": key,
        "csrf": "x",
    }
    data = b64encode(json.dumps(session).encode())
    signed = TimestampSigner(session_secret(settings)).sign(data)
    return f"{COOKIE}={signed.decode()}"


def reader_forge(readable: list[str]) -> GitHubAPI:
    """GitHub as the reader's token sees it: `readable` repositories answer (read, no push),
    every other one is hidden. Only the viewers' own tokens are ever sent, never an App JWT."""
    api = GitHubAPI(app_id="0", public_key="")
    for viewer in (READER, ADMIN):
        api.add_token(viewer.token, viewer.login)
        api.user_ids[viewer.login] = int(viewer.external_id)
    for repo in readable:
        api.add_repo(repo, clone_url=f"{api.web_url}/{repo}.git")
    return api
