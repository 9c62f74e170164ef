"""GitHub credentials for a job: App installation tokens, or the requester's stored token.

Tokens are never logged or put in exception messages, and each one is registered with
`resolver.core.logs` as soon as it is in memory, so an accidental log line shows it masked. GitHub
may change the token format (`ghs_APPID_JWT` since 2026), so tokens are never checked for shape.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final
from urllib.parse import SplitResult, quote, urlsplit, urlunsplit

import jwt

from integrations.github import signin
from integrations.github.api import github_session, translate_errors
from integrations.github.client import GitHubClient
from integrations.github.settings import GitHubSettings
from integrations.github.trigger import installation_of
from integrations.toolkit.answers import fields, text
from integrations.toolkit.git import basic, repository_header_env
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.contract.signin import ForgeUnreachableError, IssuedToken, sign_in_again
from resolver.contract.triggers import TaskTrigger, repo_of
from resolver.core.logs import log, redact, register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import Clock, TokenRevokedError, refuse_token, stored_token

logger = logging.getLogger(__name__)

GIT_USER: Final = "x-access-token"
# Cached installation tokens are replaced this long before GitHub's `expires_at`.
REFRESH_MARGIN: Final = timedelta(minutes=5)
# GitHub allows 10 minutes of JWT lifetime; iat is backdated a minute against clock drift.
JWT_BACKDATE_SECONDS: Final = 60
JWT_LIFETIME_SECONDS: Final = 9 * 60
# What a job's installation token may do, and only on the job's own repository: push its
# branch, open its pull request, comment and react on the issue.
JOB_PERMISSIONS: Final = {"contents": "write", "pull_requests": "write", "issues": "write"}
# What reading a failing check needs (a fix job on red CI), minted apart so that an App
# installed before these permissions were asked for still gets its job tokens.
CI_READ_PERMISSIONS: Final = {"checks": "read", "actions": "read"}
_USERINFO: Final = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


class GitHubAuthError(PermanentCallbackError):
    """No GitHub credential can be made or used: none stored, an unreadable App key, a non-HTTP
    clone URL. Retrying cannot help; the message says what to fix (and holds no secret)."""


def build_app_jwt(app_id: str, private_key: str, now: float) -> str:
    """The App's JWT: RS256, `iss` = app id, `iat` = now - 60 s, `exp` = now + 9 min."""
    claims = {
        "iss": app_id,
        "iat": int(now) - JWT_BACKDATE_SECONDS,
        "exp": int(now) + JWT_LIFETIME_SECONDS,
    }
    try:
        return jwt.encode(claims, private_key, algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError):
        raise GitHubAuthError("the GitHub App private key is not a PEM RSA private key") from None


def app_configured(settings: Settings) -> bool:
    github = GitHubSettings.of(settings)
    has_key = github.app_private_key is not None or github.app_private_key_path is not None
    return bool(github.app_id) and has_key


def _private_key(settings: Settings) -> str:
    """The App's key: the PEM itself (from the vault, `/setup`), else the file it names."""
    github = GitHubSettings.of(settings)
    if github.app_private_key is not None:
        return github.app_private_key.get_secret_value()
    path = github.app_private_key_path
    if path is None:
        raise GitHubAuthError("the GitHub App has no private key")
    try:
        return Path(path).read_text()
    except OSError as error:
        raise GitHubAuthError(
            f"cannot read the GitHub App private key at {path}: {error.strerror}"
        ) from None


def app_jwt(settings: Settings) -> str:
    """A fresh JWT of the App (`build_app_jwt`), from its configured id and key."""
    if not app_configured(settings):
        raise GitHubAuthError(
            "the GitHub App is not configured: create it at /setup (or `resolver setup github`), "
            "or set RESOLVER_GITHUB_APP_ID and RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH"
        )
    app_id = GitHubSettings.of(settings).app_id
    assert app_id is not None
    private_key = _private_key(settings)
    token = build_app_jwt(app_id, private_key, time.time())
    register_secret(token, passing=True)  # it lives ten minutes: not one to mask for good
    return token


@dataclass(frozen=True)
class _Cached:
    token: str
    refresh_at: datetime


class InstallationTokens:
    """Installation tokens per (API, app, installation), minted on demand and reused until
    `REFRESH_MARGIN` before they expire. One instance per process is enough."""

    def __init__(self, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens: dict[tuple[str, str, int, str | None], _Cached] = {}

    def __repr__(self) -> str:
        return f"InstallationTokens(<{len(self._tokens)} hidden>)"

    def get(
        self,
        settings: Settings,
        installation_id: int,
        repository: str | None = None,
        permissions: Mapping[str, str] = JOB_PERMISSIONS,
    ) -> str:
        """A token of the installation; with `repository` (`owner/name`), one minted for that
        repository alone, with `permissions`."""
        scope = ",".join(f"{k}:{v}" for k, v in sorted(permissions.items()))
        github = GitHubSettings.of(settings)
        key = (
            github.api_url,
            str(github.app_id),
            installation_id,
            repository if permissions is JOB_PERMISSIONS else f"{repository}|{scope}",
        )
        # One lock for all: a miss is rare (hourly) and must not mint twice.
        with self._lock:
            cached = self._tokens.get(key)
            if cached is None or self._clock() >= cached.refresh_at:
                cached = self._mint(settings, installation_id, repository, permissions)
                self._tokens[key] = cached
        # A token lives an hour: masked among the most recent while it is in use, not for good.
        register_secret(cached.token, passing=True)
        return cached.token

    def clear(self) -> None:
        with self._lock:
            self._tokens.clear()

    def _mint(
        self,
        settings: Settings,
        installation_id: int,
        repository: str | None,
        permissions: Mapping[str, str] = JOB_PERMISSIONS,
    ) -> _Cached:
        bearer = {"Authorization": f"Bearer {app_jwt(settings)}"}
        scope: dict[str, Any] = {}
        if repository:
            scope = {
                "repositories": [repository.rpartition("/")[2]],
                "permissions": dict(permissions),
            }
        with translate_errors("POST /app/installations/{installation_id}/access_tokens"):
            github = github_session(settings)
            answer = github.rest.apps.create_installation_access_token(
                installation_id, headers=bearer, **scope
            )
            data = fields(answer.json())
            token = text(data["token"])
        register_secret(token, passing=True)
        cached = _Cached(token, self._refresh_at(data.get("expires_at")))
        log(
            logger,
            logging.INFO,
            "github.installation_token_minted",
            installation=installation_id,
            refresh_at=cached.refresh_at.isoformat(),
        )
        return cached

    def _refresh_at(self, expires_at: object) -> datetime:
        try:
            expiry = datetime.fromisoformat(str(expires_at))
        except ValueError:
            return self._clock()  # no usable expiry: use the token once, never from the cache
        expiry = expiry if expiry.tzinfo else expiry.replace(tzinfo=UTC)
        return expiry - REFRESH_MARGIN


installation_tokens: Final = InstallationTokens()


def installation_token(
    installation_id: int, settings: Settings, repository: str | None = None
) -> str:
    """A valid installation token (for `repository` alone, when given), from this process's
    cache or freshly minted."""
    return installation_tokens.get(settings, installation_id, repository)


def user_token(requester_id: int, settings: Settings, clock: Clock | None = None) -> str | None:
    """The user's newest GitHub token (from signing in, or `resolver tokens set`), renewed first
    when it expires within minutes. A token GitHub refused is a GitHubAuthError that tells them
    to sign in again."""

    def renew(refresh_token: str) -> IssuedToken:
        return signin.refresh(settings, refresh_token)

    try:
        return stored_token(
            "github", user_id=requester_id, settings=settings, refresh=renew, clock=clock
        )
    except TokenRevokedError:
        raise GitHubAuthError(sign_in_again("GitHub", settings)) from None
    except ForgeUnreachableError as error:
        raise TransientCallbackError(str(error)) from None


class JobToken:
    """The token a job acts with (see `token_for_job`), and what GitHub's 401 to it means: for
    the requester's own token, that it was revoked, which is recorded and told."""

    def __init__(self, trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> None:
        self._trigger, self._requester_id, self._settings = trigger, requester_id, settings
        self._user_token: str | None = None

    def __call__(self) -> str:
        installation_id = installation_of(self._trigger)
        if installation_id is not None and app_configured(self._settings):
            self._user_token = None
            repository = job_repository(self._trigger)
            return installation_token(installation_id, self._settings, repository)
        found = (
            None if self._requester_id is None else user_token(self._requester_id, self._settings)
        )
        if found is None:
            raise GitHubAuthError(
                "no GitHub credential for this job: install the GitHub App "
                "(RESOLVER_GITHUB_APP_ID, RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH), or the requester "
                "signs in to Resolver with GitHub, or store their token with "
                "`resolver tokens set --provider github --user NAME`"
            )
        self._user_token = found
        return found

    def refused(self) -> CallbackError | None:
        if self._user_token is None or self._requester_id is None:
            return None
        refuse_token("github", self._requester_id, self._user_token, self._settings)
        log(logger, logging.WARNING, "github.user_token_refused", user=self._requester_id)
        return GitHubAuthError(sign_in_again("GitHub", self._settings))


def token_for_job(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> str:
    """The token a job acts with: the App's installation token when the event came through the
    App (minted for the job's repository alone), else the requester's own stored token. Raises
    GitHubAuthError when there is neither."""
    return JobToken(trigger, requester_id, settings)()


def job_repository(trigger: TaskTrigger) -> str | None:
    """The `owner/name` a job acts on: its trigger's, or its plan's (a repository named in a
    request)."""
    repo = (trigger.planned.repo if trigger.planned else None) or repo_of(trigger)
    return repo if repo and "/" in repo else None


def ci_client(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> GitHubClient:
    """A client that reads a job's check runs and Actions logs: an installation token with
    CI_READ_PERMISSIONS on the job's repository alone, else the job's own token."""
    installation_id = installation_of(trigger)
    repository = job_repository(trigger)
    if installation_id is None or repository is None or not app_configured(settings):
        return client_for_job(trigger, requester_id, settings)

    def token() -> str:
        tokens = installation_tokens
        return tokens.get(settings, installation_id, repository, CI_READ_PERMISSIONS)

    return GitHubClient(settings, token)


def client_for_job(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> GitHubClient:
    """A client that acts with the job's token (looked up again before every call)."""
    token = JobToken(trigger, requester_id, settings)
    return GitHubClient(settings, token, refused=token.refused)


def authenticated_clone_url(clone_url: str, token: str) -> str:
    """`clone_url` with `x-access-token:<token>@` as its credentials, for one git command.

    git stores a clone's URL in `.git/config`, which the sandbox can read: reset `origin` to the
    bare URL after cloning, or prefer `git_auth_env`, which keeps the token out of files.
    """
    parts, host = _http_url(clone_url)
    register_secret(token, passing=True)
    return urlunsplit(parts._replace(netloc=f"{GIT_USER}:{quote(token, safe='')}@{host}"))


def git_auth_env(clone_url: str, token: str) -> dict[str, str]:
    """Environment for the host's git that sends the token to `clone_url`'s repository only, as
    a Basic auth header."""
    return repository_header_env(clone_url, token, basic(GIT_USER, token), forge="GitHub")


def _http_url(url: str) -> tuple[SplitResult, str]:
    """The URL's parts and its host[:port] without credentials; only http(s) may carry a token."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GitHubAuthError(f"cannot send a token to {strip_credentials(url)!r}: not HTTP")
    return parts, parts.netloc.rpartition("@")[2]


def strip_credentials(text: str) -> str:
    """`text` without the credentials of any URL in it, and with every known secret masked."""
    return redact(_USERINFO.sub(r"\g<scheme>", text))
