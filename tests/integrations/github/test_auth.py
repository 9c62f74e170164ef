"""GitHub credentials: App JWT, installation tokens minted once and cached, user tokens from
the vault, and URLs that carry a token only where git needs one."""

from __future__ import annotations

import base64
import os
import subprocess
import time
from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jwt
import pytest

from integrations.github.auth import (
    GitHubAuthError,
    InstallationTokens,
    authenticated_clone_url,
    build_app_jwt,
    client_for_job,
    git_auth_env,
    installation_token,
    strip_credentials,
    token_for_job,
)
from integrations.github.settings import GitHubSettings
from integrations.github.standin.api import GitHubAPI, Repo
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.triggers import read_trigger
from resolver.core import logs
from resolver.core.logs import redact
from resolver.core.settings import Settings, get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.conftest import ResolverEnv
from tests.integrations.github.conftest import APP_ID, INSTALLATION_ID, REPO, AppKey, make_settings
from tests.support.serving import served_answer

MINT = "POST /app/installations/{installation_id}/access_tokens"


def test_app_jwt_claims(app_key: AppKey) -> None:
    now = 1_800_000_000.0
    token = build_app_jwt(APP_ID, app_key.private_pem, now)
    assert jwt.get_unverified_header(token) == {"alg": "RS256", "typ": "JWT"}
    claims = jwt.decode(
        token,
        app_key.public_pem,
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims == {"iss": APP_ID, "iat": int(now) - 60, "exp": int(now) + 540}


def test_a_key_that_is_not_pem_is_a_clear_permanent_error() -> None:
    with pytest.raises(GitHubAuthError, match="not a PEM RSA private key") as failed:
        build_app_jwt(APP_ID, "-----BEGIN NOT A KEY-----\nc2VjcmV0\n", time.time())
    assert "c2VjcmV0" not in str(failed.value)


def test_a_missing_key_file_names_the_setting(github_api: GitHubAPI, tmp_path: Path) -> None:
    settings = make_settings(github_api.base_url, tmp_path / "absent.pem")
    with pytest.raises(GitHubAuthError, match="cannot read the GitHub App private key"):
        installation_token(INSTALLATION_ID, settings)
    assert github_api.requests == []


def test_installation_token_is_minted_once_then_cached(
    settings: Settings, github_api: GitHubAPI
) -> None:
    first = installation_token(INSTALLATION_ID, settings)
    second = installation_token(INSTALLATION_ID, settings)

    assert first == second == github_api.minted[0]
    [mint] = github_api.calls(MINT)
    assert mint.path == f"/app/installations/{INSTALLATION_ID}/access_tokens"
    assert mint.status == 201
    [claims] = github_api.jwt_claims
    assert claims["iss"] == APP_ID
    assert claims["exp"] - claims["iat"] == 600


def test_each_installation_has_its_own_token(settings: Settings, github_api: GitHubAPI) -> None:
    github_api.add_installation(78)
    assert installation_token(INSTALLATION_ID, settings) != installation_token(78, settings)
    assert len(github_api.calls(MINT)) == 2


def test_a_token_within_five_minutes_of_expiry_is_replaced(
    settings: Settings, github_api: GitHubAPI
) -> None:
    github_api.token_lifetime = timedelta(minutes=4, seconds=50)
    first = installation_token(INSTALLATION_ID, settings)
    second = installation_token(INSTALLATION_ID, settings)
    assert first != second
    assert len(github_api.calls(MINT)) == 2


def test_the_cache_follows_the_clock(settings: Settings, github_api: GitHubAPI) -> None:
    now = [datetime.now(UTC)]
    tokens = InstallationTokens(clock=lambda: now[0])
    first = tokens.get(settings, INSTALLATION_ID)
    now[0] += timedelta(minutes=54)
    assert tokens.get(settings, INSTALLATION_ID) == first
    # 57 min in: less than 5 min left of the hour, even when the mint was served a few
    # seconds after this clock was read (the stand-in dates expiry by the real clock).
    now[0] += timedelta(minutes=3)
    assert tokens.get(settings, INSTALLATION_ID) != first
    assert len(github_api.calls(MINT)) == 2


def test_tokens_and_jwts_are_masked_among_the_most_recent_not_for_good(
    settings: Settings, github_api: GitHubAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They live an hour and ten minutes: masked for good, the mask grew with each, and each
    new one rebuilt all of it (half a second at 800)."""
    monkeypatch.setattr(logs, "_known", set())
    monkeypatch.setattr(logs, "_passing", OrderedDict())
    monkeypatch.setattr(logs, "_redactor", logs.Redactor())
    github_api.add_installation(78)
    tokens = [installation_token(number, settings) for number in (INSTALLATION_ID, 78)]
    header = git_auth_env("https://ghe.example.test/o/r.git", tokens[0])["GIT_CONFIG_VALUE_0"]
    basic = header.rpartition(" ")[2]
    assert logs._known == set()
    assert {*tokens, basic} < logs._passing.keys()
    jwts = logs._passing.keys() - {*tokens, basic}  # the App's (one, when made in one second)
    assert jwts and all(
        jwt.decode(j, options={"verify_signature": False})["iss"] == APP_ID for j in jwts
    )
    assert installation_token(INSTALLATION_ID, settings) == tokens[0]  # in use: the most recent
    assert next(reversed(logs._passing)) == tokens[0]


def test_mint_failures_keep_their_fate(settings: Settings, github_api: GitHubAPI) -> None:
    github_api.fail(MINT, 502)
    with pytest.raises(TransientCallbackError):
        installation_token(INSTALLATION_ID, settings)
    with pytest.raises(PermanentCallbackError) as failed:
        installation_token(999, settings)  # an installation that was removed
    assert failed.value.status == 404
    assert installation_token(INSTALLATION_ID, settings) == github_api.minted[0]


def test_a_jwt_for_another_app_is_refused(github_api: GitHubAPI, key_file: Path) -> None:
    settings = make_settings(github_api.base_url, key_file, github_app_id="31337")
    with pytest.raises(PermanentCallbackError) as failed:
        installation_token(INSTALLATION_ID, settings)
    assert failed.value.status == 401
    assert github_api.minted == []


# --- token_for_job: which credential a job acts with ---------------------------------------


@pytest.fixture
def github_env(
    resolver_env: ResolverEnv,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    key_file: Path,
) -> Iterator[Settings]:
    """The process settings (database, vault keys) pointed at the GitHub stand-in."""
    monkeypatch.setenv("RESOLVER_GITHUB_API_URL", github_api.base_url)
    monkeypatch.setenv("RESOLVER_GITHUB_APP_ID", APP_ID)
    monkeypatch.setenv("RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH", str(key_file))
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def store_user_token(
    settings: Settings, name: str, token: str, expires_at: datetime | None = None
) -> int:
    with session_scope() as session:
        user = accounts.add_user(session, name)
        store_credential(
            session,
            Vault(settings.fernet_keys),
            provider="github",
            kind="pat",
            secret=token,
            user_id=user.id,
            expires_at=expires_at,
        )
        return user.id


TRIGGER = {"repo": REPO, "number": 7, "installation_id": INSTALLATION_ID}


def test_a_job_from_the_app_uses_the_installation_token(
    github_env: Settings, github_api: GitHubAPI
) -> None:
    user_id = store_user_token(github_env, "bob", "ghp_" + "b" * 36)
    assert token_for_job(read_trigger(TRIGGER), user_id, get_settings()) == github_api.minted[0]


def test_without_an_installation_the_requesters_token_is_used(
    github_env: Settings, github_api: GitHubAPI
) -> None:
    user_id = store_user_token(github_env, "bob", "ghp_" + "b" * 36)
    trigger = {**TRIGGER, "installation_id": None}
    assert token_for_job(read_trigger(trigger), user_id, get_settings()) == "ghp_" + "b" * 36
    assert github_api.requests == []


def test_without_app_settings_the_requesters_token_is_used(
    github_env: Settings, github_api: GitHubAPI
) -> None:
    user_id = store_user_token(github_env, "bob", "gho_oauth-token-of-bob")
    github = GitHubSettings.of(github_env)
    no_app = github_env.with_section(github.model_copy(update={"app_id": None}))
    assert token_for_job(read_trigger(TRIGGER), user_id, no_app) == "gho_oauth-token-of-bob"


def test_an_expired_user_token_is_not_used(github_env: Settings) -> None:
    yesterday = datetime.now(UTC) - timedelta(days=1)
    user_id = store_user_token(github_env, "bob", "gho_expired-token", expires_at=yesterday)
    with pytest.raises(GitHubAuthError, match="resolver tokens set"):
        token_for_job(read_trigger({"installation_id": None}), user_id, get_settings())


def test_no_credential_at_all_is_a_permanent_error(github_env: Settings) -> None:
    with pytest.raises(PermanentCallbackError, match="no GitHub credential"):
        token_for_job(read_trigger({"installation_id": None}), None, get_settings())


# --- tokens in URLs, environments and text -----------------------------------------------


def test_authenticated_clone_url() -> None:
    token = "ghs_1_a.b/c+d"
    assert (
        authenticated_clone_url("https://github.com/octo/widgets.git", token)
        == "https://x-access-token:ghs_1_a.b%2Fc%2Bd@github.com/octo/widgets.git"
    )
    assert (
        authenticated_clone_url("http://old:creds@127.0.0.1:8080/a/b.git", "t0ken-value")
        == "http://x-access-token:t0ken-value@127.0.0.1:8080/a/b.git"
    )
    with pytest.raises(GitHubAuthError) as failed:
        authenticated_clone_url("git@github.com:octo/widgets.git", "t0ken-value")
    assert "t0ken-value" not in str(failed.value)


def test_strip_credentials_removes_userinfo_and_known_tokens() -> None:
    token = "ghs_42_opaque.token-" + "x" * 12
    url = authenticated_clone_url("https://github.com/o/r.git", token)  # registers the token
    text = f"fatal: unable to access '{url}/': 403; token was {token}"
    assert strip_credentials(text) == (
        "fatal: unable to access 'https://github.com/o/r.git/': 403; token was ******"
    )
    assert token not in redact(f"a log line with {token}")


def test_clone_with_the_minted_token_and_reset_origin(
    settings: Settings, repo: Repo, git_server: GitHttpServer, tmp_path: Path
) -> None:
    token = installation_token(INSTALLATION_ID, settings)
    work = tmp_path / "work"
    run_git("clone", "--quiet", authenticated_clone_url(repo.clone_url, token), str(work))
    run_git("remote", "set-url", "origin", repo.clone_url, cwd=work)
    assert token not in (work / ".git" / "config").read_text()
    assert (work / "README.md").exists()


def test_git_auth_env_keeps_the_token_out_of_the_workspace(
    settings: Settings, repo: Repo, git_server: GitHttpServer, tmp_path: Path
) -> None:
    token = installation_token(INSTALLATION_ID, settings)
    work = tmp_path / "work"
    env = git_auth_env(repo.clone_url, token)
    run_git("clone", "--quiet", repo.clone_url, str(work), env=env)
    (work / "new.txt").write_text("new\n")
    run_git("add", "new.txt", cwd=work)
    run_git("-c", "user.name=r", "-c", "user.email=r@x", "commit", "-qm", "n", cwd=work)
    run_git("push", "--quiet", "origin", "HEAD:refs/heads/resolver/1-x", cwd=work, env=env)

    stored = "".join(
        p.read_text(errors="ignore") for p in (work / ".git").rglob("*") if p.is_file()
    )
    assert token not in stored
    assert env["GIT_CONFIG_VALUE_0"] not in stored
    with pytest.raises(subprocess.CalledProcessError):
        run_git("fetch", "--quiet", "origin", cwd=work)  # without the environment: no credential
    assert git_server.requests[-1].status == 401


def test_git_auth_env_sends_the_token_only_to_that_repository(tmp_path: Path) -> None:
    env = git_auth_env("https://ghe.example.test:8443/o/r.git", "t0ken-value")
    assert env["GIT_CONFIG_KEY_0"] == "http.https://ghe.example.test:8443/o/r.git.extraHeader"
    assert redact(env["GIT_CONFIG_VALUE_0"]) == "Authorization: Basic ******"


def test_real_git_sends_the_header_to_the_jobs_repository_and_no_other(
    github_api: GitHubAPI, git_server: GitHttpServer
) -> None:
    create_bare_repo(git_server.root, REPO)
    create_bare_repo(git_server.root, "octo/private")
    env = git_auth_env(git_server.url_for(REPO), github_api.mint())
    assert run_git("ls-remote", git_server.url_for(REPO), env={**os.environ, **env})
    with pytest.raises(subprocess.CalledProcessError):
        run_git("ls-remote", git_server.url_for("octo/private"), env={**os.environ, **env})
    assert git_server.requests[-1].status == 401  # no header went there


def test_a_jobs_installation_token_reaches_its_repository_alone(
    settings: Settings, github_api: GitHubAPI, git_server: GitHttpServer
) -> None:
    for name in (REPO, "octo/private"):
        github_api.add_repo(
            name, git_server.url_for(name), bare=create_bare_repo(git_server.root, name)
        )
    trigger = {"installation_id": INSTALLATION_ID, "repo": REPO, "number": 1}
    token = token_for_job(read_trigger(trigger), None, settings)
    [asked] = github_api.token_requests
    assert asked == {
        "repositories": [REPO.split("/")[1]],
        "permissions": {"contents": "write", "pull_requests": "write", "issues": "write"},
    }
    client = client_for_job(read_trigger(trigger), None, settings)
    assert client.repository(REPO)[0] == git_server.url_for(REPO)
    with pytest.raises(PermanentCallbackError):
        client.repository("octo/private")  # 404: the token cannot see it
    # Its git credentials open the job's repository and not the other one, even sent there.
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    header = f"http.extraHeader=Authorization: Basic {basic}"
    assert run_git("-c", header, "ls-remote", git_server.url_for(REPO))
    with pytest.raises(subprocess.CalledProcessError):
        run_git("-c", header, "ls-remote", git_server.url_for("octo/private"))


@pytest.mark.parametrize("answer", [b"{}", b'{"token": null}', b"[]"])
def test_an_installation_token_answer_without_a_token_mints_none(
    answer: bytes, key_file: Path
) -> None:
    """No token is cached as 'None' and sent to GitHub as one: the mint fails once as
    GitHub's unusable answer (a KeyError or TypeError before)."""
    with (
        served_answer(answer, status=201) as url,
        pytest.raises(PermanentCallbackError, match="unusable"),
    ):
        installation_token(INSTALLATION_ID + 1, make_settings(url, key_file))
