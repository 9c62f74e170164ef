"""`resolver doctor` prints the preflight after its own checks, names a weak secret with its
fix and never its value, and counts settings kept in the vault."""

from __future__ import annotations

import secrets
import subprocess

from resolver.core.settings import get_settings
from resolver.store import configured
from resolver.store.db import session_scope
from tests.conftest import ResolverEnv
from tests.support import procs
from tests.support.llm_server import error, scripted_llm


def doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    # one table row per line
    return procs.run({**env, "COLUMNS": "400"}, "-m", "resolver.cli", "doctor", *args, timeout=300)


def test_a_weak_webhook_secret_fails_doctor_with_its_fix(resolver_env: ResolverEnv) -> None:
    env = resolver_env.child_env(RESOLVER_GITHUB_WEBHOOK_SECRET="hunter2-hunter2")

    done = doctor(env, "--offline")

    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() if "RESOLVER_GITHUB_WEBHOOK_SECRET" in x)
    assert "fail" in line
    assert (
        "RESOLVER_GITHUB_WEBHOOK_SECRET is weak (15 characters): rotate it with `resolver" in line
    )
    assert "hunter2" not in done.stdout + done.stderr


def test_a_secret_kept_in_the_vault_is_checked_too(resolver_env: ResolverEnv) -> None:
    with session_scope() as session:
        configured.save(session, get_settings(), {"linear_webhook_secret": "linear-linear-2024"})

    done = doctor(resolver_env.child_env(), "--offline")

    assert "RESOLVER_LINEAR_WEBHOOK_SECRET is weak" in done.stdout
    assert "linear-linear-2024" not in done.stdout
    assert done.stdout.index("web sign-in") < done.stdout.index("RESOLVER_LINEAR_WEBHOOK_SECRET")


def test_the_llm_key_from_the_environment_is_masked_in_the_models_answer(
    resolver_env: ResolverEnv,
) -> None:
    """A gateway's refusal that quotes the key, in a shape no pattern knows: only a job's run
    told the logs' mask the settings' secrets, and doctor showed the key."""
    key = "corpgw-" + secrets.token_hex(12)
    with scripted_llm([error(400, f"key {key} is not allowed to use this model")]) as llm:
        env = resolver_env.child_env(
            RESOLVER_LLM_MODEL="openai/gpt-4o-mini",
            RESOLVER_LLM_API_KEY=key,
            RESOLVER_LLM_BASE_URL=llm.base_url,
        )
        done = doctor(env)
    line = next(x for x in done.stdout.splitlines() if "is not allowed to use this model" in x)
    assert "key ****** is not allowed" in line
    assert key not in done.stdout + done.stderr
