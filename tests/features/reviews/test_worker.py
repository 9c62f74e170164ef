"""Whether a review batch resolves its threads: read from `.resolver/config.yml` on the default
branch of a real repository, never from the branch; a bad value stops the job saying why."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from integrations import registry
from integrations.standin.git_http import create_bare_repo, run_git
from resolver.contract.outbound import RepoInfo
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from resolver.core.states import Outcome
from resolver.features.reviews.worker import resolves_threads
from resolver.worker.values import Plan, Snapshot, Stop
from tests.conftest import ResolverEnv

RESOLVING = "reviews:\n  resolve_threads: true\n"


def _snapshot(forge: str, batch: bool = True) -> Snapshot:
    trigger: dict[str, Any] = {"repo": "group/widgets", "number": 7, "is_pull_request": True}
    if batch:
        trigger["review_batch"] = True
    return Snapshot(
        1, forge, "fix", "group/widgets", "alice", None, read_trigger(trigger), None, None
    )


def _plan(tmp_path: Path, forge: str, config: str | None, branch_config: str | None = None) -> Plan:
    files = {"README.md": "# widgets\n", **({".resolver/config.yml": config} if config else {})}
    bare = create_bare_repo(tmp_path / "git", "group/widgets", files)
    if branch_config is not None:
        work = tmp_path / "work"
        run_git("clone", "--quiet", str(bare), str(work))
        run_git("checkout", "--quiet", "-b", "resolver/7-x", cwd=work)
        (work / ".resolver").mkdir(exist_ok=True)
        (work / ".resolver/config.yml").write_text(branch_config)
        run_git("add", ".", cwd=work)
        run_git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x", cwd=work)
        run_git("push", "--quiet", "origin", "resolver/7-x", cwd=work)
    repo = RepoInfo("group/widgets", f"file://{bare}", "main")
    return Plan(forge, repo, "main", "resolver/7-x", "resolver/7-x", True)


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_threads_are_resolved_only_when_the_default_branch_allows_it(
    resolver_env: ResolverEnv, tmp_path: Path, forge: str
) -> None:
    assert resolves_threads(
        _snapshot(forge),
        _plan(tmp_path / "a", forge, RESOLVING),
        None,
        get_settings().sandbox_workspace_root,
    )
    assert not resolves_threads(
        _snapshot(forge),
        _plan(tmp_path / "b", forge, None),
        None,
        get_settings().sandbox_workspace_root,
    )
    # The bot's branch saying so is not the repository saying so.
    plan = _plan(tmp_path / "c", forge, None, branch_config=RESOLVING)
    assert not resolves_threads(_snapshot(forge), plan, None, get_settings().sandbox_workspace_root)


def test_no_setting_is_read_where_nothing_would_be_resolved(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    """Not a review batch, or a provider that cannot resolve: no clone, even of a bad
    setting."""
    plan = _plan(tmp_path, "gitlab", "reviews: yes\n")
    assert not resolves_threads(
        _snapshot("gitlab", batch=False), plan, None, get_settings().sandbox_workspace_root
    )
    unable = next(p.name for p in registry.installed() if p.resolve_thread is None)
    assert not resolves_threads(
        _snapshot(unable),
        replace(plan, forge_name=unable),
        None,
        get_settings().sandbox_workspace_root,
    )


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("reviews: yes\n", "`reviews` must be a mapping"),
        ("reviews:\n  resolve_threads: sometimes\n", "must be true or false"),
        ("reviews: [\n", "is not valid YAML"),
    ],
)
def test_a_bad_setting_stops_the_job_saying_what_is_wrong(
    resolver_env: ResolverEnv, tmp_path: Path, config: str, says: str
) -> None:
    with pytest.raises(Stop) as stopped:
        resolves_threads(
            _snapshot("gitlab"),
            _plan(tmp_path, "gitlab", config),
            None,
            get_settings().sandbox_workspace_root,
        )
    assert stopped.value.outcome == Outcome.COULD_NOT
    assert "I cannot take the review" in str(stopped.value) and says in str(stopped.value)
