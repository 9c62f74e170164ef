import subprocess

import pytest

from tests.support import procs


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`resolver ARGS` in a process of its own, which reads its settings afresh."""
    return procs.run(env, "-m", "resolver.cli", *args)


def test_missing_secret_keys_stops_with_one_line(resolver_env) -> None:
    env = resolver_env.child_env()
    env.pop("RESOLVER_SECRET_KEYS")
    done = run_cli(env, "jobs", "list")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "RESOLVER_SECRET_KEYS is missing" in lines[0]
    assert "resolver keys generate" in lines[0]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RESOLVER_SECRET_KEYS", "not-a-fernet-key"),
        ("RESOLVER_DATABASE_URL", "mysql://nope"),
        ("RESOLVER_REDIS_URL", "http://localhost"),
        ("RESOLVER_SANDBOX_PIDS", "many"),
        ("RESOLVER_SANDBOX_EGRESS_SUBNETS", "198.18.0.0/30"),
        ("RESOLVER_SANDBOX_EGRESS_SUBNETS", "fd00::/64"),
    ],
)
def test_invalid_setting_is_named(resolver_env, name: str, value: str) -> None:
    done = run_cli(resolver_env.child_env(**{name: value}), "jobs", "list")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{name} is invalid" in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("entry", ["Boss", "github:boss", "github:id:boss", "github:id:"])
def test_an_admin_named_by_login_or_name_is_refused(resolver_env, monkeypatch, entry) -> None:
    """A login can be renamed and taken, a user name claimed by whoever links first: neither
    makes an admin, and the error says how to name one by id."""
    from resolver.core.settings import ConfigError, load_settings

    monkeypatch.setenv("RESOLVER_ADMINS", f"github:id:4001, {entry}")
    with pytest.raises(ConfigError) as refused:
        load_settings()
    assert "RESOLVER_ADMINS is invalid" in str(refused.value)
    example = "provider" if ":" not in entry else "github"
    assert f"{example}:id:NUMBER" in str(refused.value) and repr(entry) in str(refused.value)


def test_admins_are_forge_accounts_by_id(resolver_env, monkeypatch) -> None:
    from resolver.core.settings import load_settings

    monkeypatch.setenv("RESOLVER_ADMINS", " github:id:4001,GitLab:ID:042 ,")
    assert load_settings().admin_ids == {("github", "4001"), ("gitlab", "42")}


# The variables the providers' settings had when they were fields of `Settings`: an operator's
# .env names these, so a provider's own class keeps every one of them.
PROVIDER_VARIABLES = {
    *("RESOLVER_GITHUB_API_URL", "RESOLVER_GITHUB_WEB_URL", "RESOLVER_GITHUB_CLIENT_ID"),
    *("RESOLVER_GITHUB_CLIENT_SECRET", "RESOLVER_GITHUB_APP_ID", "RESOLVER_GITHUB_APP_PRIVATE_KEY"),
    *("RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH", "RESOLVER_GITHUB_WEBHOOK_SECRET"),
    *("RESOLVER_GITLAB_URL", "RESOLVER_GITLAB_CLIENT_ID", "RESOLVER_GITLAB_CLIENT_SECRET"),
    *("RESOLVER_GITLAB_WEBHOOK_TOKEN", "RESOLVER_GITLAB_SIGNING_TOKEN"),
    *("RESOLVER_SLACK_API_URL", "RESOLVER_SLACK_WEB_URL", "RESOLVER_SLACK_CLIENT_ID"),
    *("RESOLVER_SLACK_CLIENT_SECRET", "RESOLVER_SLACK_SIGNING_SECRET", "RESOLVER_SLACK_APP_ID"),
    *("RESOLVER_JIRA_URL", "RESOLVER_JIRA_WEBHOOK_SECRET", "RESOLVER_ATLASSIAN_AUTH_URL"),
    *("RESOLVER_ATLASSIAN_API_URL", "RESOLVER_ATLASSIAN_CLIENT_ID"),
    *("RESOLVER_ATLASSIAN_CLIENT_SECRET", "RESOLVER_LINEAR_API_URL", "RESOLVER_LINEAR_WEB_URL"),
    *("RESOLVER_LINEAR_CLIENT_ID", "RESOLVER_LINEAR_CLIENT_SECRET"),
    "RESOLVER_LINEAR_WEBHOOK_SECRET",
}


def test_each_providers_settings_keep_their_variables_in_its_own_class() -> None:
    from integrations import registry
    from resolver.core.settings import Settings

    found = {k.variable(f) for k in registry.settings_classes() for f in k.model_fields}
    assert found >= PROVIDER_VARIABLES  # a provider installed since brings its own
    assert not {f"RESOLVER_{n.upper()}" for n in Settings.model_fields} & PROVIDER_VARIABLES
    for kind in registry.settings_classes():
        prefix = str(kind.model_config.get("env_prefix"))
        name = prefix.removeprefix("RESOLVER_").removesuffix("_").lower()
        assert registry.find(name) is not None and registry.find(name).settings is kind  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "value", "hint"),
    [
        ("RESOLVER_GITLAB_URL", "gitlab.example.com", "https://gitlab.example.com"),
        ("RESOLVER_GITHUB_API_URL", "api.github.com", "https://HOST/api/v3"),
        ("RESOLVER_ATLASSIAN_AUTH_URL", "auth", "settings table"),
    ],
)
def test_a_bad_provider_setting_stops_start_up_with_one_line(
    resolver_env, name: str, value: str, hint: str
) -> None:
    done = run_cli(resolver_env.child_env(**{name: value}), "jobs", "list")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{name} is invalid" in lines[0] and hint in lines[0]
    assert "Traceback" not in done.stderr


def test_a_providers_section_is_read_from_dotenv_frozen_and_by_its_flat_name(
    resolver_env, monkeypatch
) -> None:
    from pydantic import ValidationError

    from integrations.github.settings import GitHubSettings
    from integrations.jira.settings import JiraSettings
    from resolver.core.settings import get_settings

    secret = "from-the-dotenv-file-0123456789"
    (resolver_env.tmp / ".env").write_text(
        f"RESOLVER_GITHUB_WEBHOOK_SECRET={secret}\nRESOLVER_ATLASSIAN_CLIENT_ID=atl-1\n"
    )
    get_settings.cache_clear()
    settings = get_settings()
    github = GitHubSettings.of(settings)
    assert github.webhook_secret is not None and github.webhook_secret.get_secret_value() == secret
    assert JiraSettings.of(settings).atlassian_client_id == "atl-1"
    assert {"github_webhook_secret", "atlassian_client_id"} <= settings.names_set()
    assert settings.value("github_webhook_secret") == github.webhook_secret
    assert secret in [s.get_secret_value() for s in settings.secrets()]
    with pytest.raises(ValidationError):
        github.webhook_secret = None  # type: ignore[misc]


def test_settings_built_without_the_providers_say_so() -> None:
    from cryptography.fernet import Fernet

    from integrations.github.settings import GitHubSettings
    from resolver.core.settings import ConfigError, Settings

    bare = Settings(_env_file=None, secret_keys=Fernet.generate_key().decode())  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="GitHubSettings is not part of these settings"):
        GitHubSettings.of(bare)
