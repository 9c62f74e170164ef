import subprocess
import sys

import pytest


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "resolver.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


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
    assert "github:id:583231" in str(refused.value) and repr(entry) in str(refused.value)


def test_admins_are_forge_accounts_by_id(resolver_env, monkeypatch) -> None:
    from resolver.core.settings import load_settings

    monkeypatch.setenv("RESOLVER_ADMINS", " github:id:4001,GitLab:ID:042 ,")
    assert load_settings().admin_ids == {("github", "4001"), ("gitlab", "42")}
