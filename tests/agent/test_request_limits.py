"""A request's own limits (a schedule's) lower the configured ones and never raise them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cryptography.fernet import Fernet

from resolver.agent.git import Clone
from resolver.agent.request import SessionRequest, build_task
from resolver.core.settings import Settings


def repo_with_config(path: Path, config: str) -> Clone:
    (path / ".resolver").mkdir(parents=True)
    (path / ".resolver" / "config.yml").write_text(config)
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.test"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), *ident, "commit", "-qm", "init"], check=True)
    return Clone(path, str(path))


def test_a_schedules_limits_only_ever_lower_the_configured_ones(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()  # given here: the environment may hold none
    settings = Settings(
        _env_file=None, secret_keys=key, llm_max_iterations=50, llm_max_cost_usd=4.0
    )
    clone = repo_with_config(tmp_path / "repo", "max_iterations: 30\n")

    def limits(**caps: float) -> tuple[int, float]:
        request = SessionRequest(job_id=1, repo="-", instruction="go", **caps)  # type: ignore[arg-type]
        task = build_task(request, settings, clone, "HEAD")
        return task.limits.max_iterations, task.limits.max_cost_usd

    assert limits() == (30, 4.0)
    assert limits(max_iterations=10, max_cost_usd=1.5) == (10, 1.5)
    assert limits(max_iterations=99, max_cost_usd=10.0) == (30, 4.0)
