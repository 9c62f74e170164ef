"""Agent test fixtures: a fresh SQLite database, the scripted LLM server, a source repository."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.support.llm_server import MODEL, ScriptedLLMServer

LLM_KEY = "test-llm-key-0123456789"
INPUT_PRICE = 0.001
OUTPUT_PRICE = 0.002


@dataclass
class AgentEnv:
    tmp: Path
    database_url: str


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer([]).start()
    yield server
    server.stop()


@pytest.fixture
def agent_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> Iterator[AgentEnv]:
    """Settings for a run against the scripted server, with prices so the cost is known."""
    from resolver.core.settings import get_settings
    from resolver.store.db import engine_for
    from resolver.store.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'resolver.db'}"
    env = {
        "RESOLVER_DATABASE_URL": url,
        "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
        "RESOLVER_SANDBOX_WORKSPACE_ROOT": str(tmp_path / "workspaces"),
        "RESOLVER_LLM_MODEL": MODEL,
        "RESOLVER_LLM_API_KEY": LLM_KEY,
        "RESOLVER_LLM_BASE_URL": llm_server.base_url,
        "RESOLVER_LLM_INPUT_COST_PER_TOKEN": str(INPUT_PRICE),
        "RESOLVER_LLM_OUTPUT_COST_PER_TOKEN": str(OUTPUT_PRICE),
        "RESOLVER_LLM_TIMEOUT": "20",
        "RESOLVER_SANDBOX_COMMAND_TIMEOUT": "30",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    upgrade(url)
    yield AgentEnv(tmp_path, url)
    get_settings.cache_clear()
    engine_for(url).dispose()


@pytest.fixture
def job_id(agent_env: AgentEnv) -> int:
    """A running job row for the agent to write its trajectory to."""
    from resolver.core.states import JobState
    from resolver.store import jobs
    from resolver.store.db import session_scope

    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source="cli", task="test"))
        jobs.transition(job, JobState.RUNNING)
        return job.id


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A git repository on branch main with `files` committed."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
    return path


@pytest.fixture
def source_repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "source",
        {"README.md": "# demo\n", "calc.py": "def add(a, b):\n    return a + b\n"},
    )


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    from sandbox import ensure_image

    return ensure_image(offline=True)
