"""The session cookie's flags, and `resolver doctor` on sign-in."""

from __future__ import annotations

from cryptography.fernet import Fernet

from integrations import registry
from resolver.core.settings import Settings
from resolver.web.session import middleware_options, safe_next


def _settings(**values: object) -> Settings:
    return registry.settings(
        {"secret_keys": Fernet.generate_key().decode(), **values}, env_file=False
    )


def test_the_cookie_is_secure_when_the_public_url_is_https() -> None:
    assert middleware_options(_settings(public_url="https://resolver.example"))["https_only"]
    plain = middleware_options(_settings(public_url="http://127.0.0.1:8000"))
    assert not plain["https_only"] and plain["same_site"] == "lax"
    assert plain["max_age"] == 12 * 3600


def test_the_session_secret_follows_the_vault_key() -> None:
    one, two = _settings(), _settings()
    assert middleware_options(one)["secret_key"] != middleware_options(two)["secret_key"]
    assert Fernet.generate_key().decode() not in middleware_options(one)["secret_key"]


def test_only_local_paths_are_followed_after_sign_in() -> None:
    assert safe_next("/jobs/4?x=1") == "/jobs/4?x=1"
    for bad in ("//evil.example", "https://evil.example", "/\\evil.example", None, "jobs"):
        assert safe_next(bad) == "/jobs"


def test_doctor_says_how_to_turn_sign_in_on() -> None:
    from resolver.cli.doctor import _sign_in

    off = _sign_in(_settings())
    assert off.status == "off" and "RESOLVER_GITHUB_CLIENT_ID" in off.detail
    sign_in = {"github_client_id": "Iv1.x", "github_client_secret": "s"}
    on = _sign_in(_settings(**sign_in, admins="github:id:1"))
    assert on.status == "ok" and "GitHub" in on.detail and "1 admin account by id" in on.detail
    elsewhere = _sign_in(_settings(**sign_in, admins="github:id:1,gitlab:id:2"))
    assert elsewhere.status == "fail" and "gitlab" in elsewhere.detail


def test_doctor_names_the_account_proofs_that_are_missing() -> None:
    from resolver.cli.doctor import _proofs

    forge = {"github_client_id": "Iv1.x", "github_client_secret": "s"}
    assert _proofs(_settings()).status == "off"
    some = _proofs(_settings(**forge, atlassian_client_id="a", atlassian_client_secret="b"))
    assert some.status == "off" and "Slack (RESOLVER_SLACK_CLIENT_ID)" in some.detail
    assert "Jira" not in some.detail and "RESOLVER_LINEAR_CLIENT_ID" in some.detail
    every = _settings(
        **forge,
        atlassian_client_id="a",
        atlassian_client_secret="b",
        slack_client_id="c",
        slack_client_secret="d",
        linear_client_id="e",
        linear_client_secret="f",
    )
    done = _proofs(every)
    assert done.status == "ok" and "Jira" in done.detail and "Slack" in done.detail
