"""What a scheduled run reads from git: someone else's commits on its branch, whether a closed
pull request was merged (merge, squash) or not, the manifests, and the schedules file (read
through the forge, as the beat does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.agent import git as git_repo
from resolver.core.settings import get_settings
from resolver.schedules.look import find_test_command, manifests, others_pushed, was_merged
from resolver.schedules.store import find_schedule, repository
from resolver.schedules.sync import claim_stale, read_file, sync_repo
from resolver.store.db import session_scope
from tests.conftest import ResolverEnv, reset_caches
from tests.e2e.github_flow import github_settings
from tests.integrations.github.conftest import INSTALLATION_ID, REPO

BOT = ("-c", "user.name=resolver", "-c", "user.email=resolver@users.noreply")
HUMAN = ("-c", "user.name=Dana", "-c", "user.email=dana@example.test")
BRANCH = "resolver/schedule-tidy"
FILES = {"calc.py": "x = 1\n", "pyproject.toml": "[project]\nname = 'w'\n"}


def commit(work: Path, who: tuple[str, ...], name: str, text: str, message: str) -> str:
    (work / name).parent.mkdir(parents=True, exist_ok=True)
    (work / name).write_text(text)
    run_git("add", "-A", cwd=work)
    run_git(*who, "commit", "-q", "-m", message, cwd=work)
    return run_git("rev-parse", "HEAD", cwd=work).strip()


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, Path]:
    """A bare repository and a working clone with the bot's branch pushed."""
    bare = create_bare_repo(tmp_path / "git", "octo/widgets", FILES)
    work = tmp_path / "work"
    run_git("clone", "-q", str(bare), str(work))
    run_git("checkout", "-q", "-b", BRANCH, cwd=work)
    commit(work, BOT, "calc.py", "x = 2\n", "tidy")
    run_git("push", "-q", "origin", BRANCH, cwd=work)
    return bare, work


def fresh_clone(bare: Path, tmp_path: Path, name: str = "look") -> git_repo.Clone:
    return git_repo.clone(str(bare), tmp_path / name)


def test_only_the_bots_commits_leave_the_branch_the_bots(
    origin: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = origin
    email = "resolver@users.noreply"
    assert not others_pushed(fresh_clone(bare, tmp_path, "a"), "origin/main", BRANCH, email)
    commit(work, HUMAN, "calc.py", "x = 3\n", "my take")
    run_git("push", "-q", "origin", BRANCH, cwd=work)
    assert others_pushed(fresh_clone(bare, tmp_path, "b"), "origin/main", BRANCH, email)


def test_a_merged_or_squashed_branch_counts_as_merged_a_closed_one_does_not(
    origin: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = origin
    head = run_git("rev-parse", "HEAD", cwd=work).strip()
    assert not was_merged(fresh_clone(bare, tmp_path, "closed"), "origin/main", head)
    # Squashed by a person on the forge: a new commit on main with the branch's content.
    run_git("checkout", "-q", "main", cwd=work)
    commit(work, HUMAN, "README.md", "more\n", "unrelated")
    commit(work, HUMAN, "calc.py", "x = 2\n", "tidy (#1)")
    run_git("push", "-q", "origin", "main", cwd=work)
    assert was_merged(fresh_clone(bare, tmp_path, "squashed"), "origin/main", head)
    # Merged with a merge commit.
    run_git(*HUMAN, "merge", "-q", "--no-edit", BRANCH, cwd=work)
    run_git("push", "-q", "origin", "main", cwd=work)
    assert was_merged(fresh_clone(bare, tmp_path, "merged"), "origin/main", head)
    # A commit the clone does not have (its branch deleted): never block on a guess.
    assert was_merged(fresh_clone(bare, tmp_path, "gone"), "origin/main", "0" * 40)


def test_manifests_and_the_test_command_come_from_the_default_branch(
    origin: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = origin
    run_git("checkout", "-q", "main", cwd=work)
    commit(work, HUMAN, ".resolver/config.yml", "test_command: python -m unittest\n", "config")
    run_git("push", "-q", "origin", "main", cwd=work)
    clone = fresh_clone(bare, tmp_path)
    assert manifests(clone, "origin/main").paths == ("pyproject.toml",)
    assert find_test_command(clone, "origin/main", None) == "python -m unittest"
    assert find_test_command(clone, "origin/main", "pytest -q") == "pytest -q"


SCHEDULES_FILE = """
schedules:
  - name: tidy
    cron: "0 7 * * 5"
    timezone: Europe/Berlin
    prompt: Tidy the lint warnings.
"""


def test_the_schedules_file_is_read_through_the_forge_from_a_shallow_clone(
    resolver_env: ResolverEnv,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    import integrations.github.provider  # noqa: F401  (registers the forge, as workers do)

    bare = create_bare_repo(
        git_server.root, REPO, {**FILES, ".resolver/schedules.yml": SCHEDULES_FILE}
    )
    github_api.add_repo(REPO, git_server.url_for(REPO), bare=bare)
    for key, value in github_settings(github_api, key_file).items():
        monkeypatch.setenv(key, value)
    reset_caches()
    with session_scope() as session:
        row = repository(session, REPO, installation_id=INSTALLATION_ID)
        row.follow_file = True
        repo_id = row.id
    with session_scope() as session:
        assert claim_stale(session, row.created_at) == [repo_id]
        assert claim_stale(session, row.created_at) == []  # claimed: not sent twice
    assert sync_repo(repo_id, get_settings().sandbox_workspace_root, get_settings()) == [
        "added tidy"
    ]
    with session_scope() as session:
        tidy = find_schedule(session, "tidy", REPO)
        assert (tidy.origin, tidy.timezone, tidy.repository.sync_error) == (
            "file",
            "Europe/Berlin",
            None,
        )
    assert [r.user for r in git_server.requests if r.status == 200]  # cloned with a token


def _installed(
    schedules_file: str,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> int:
    """REPO on the GitHub stand-in with `schedules_file`, the app installed, its row's id."""
    files = {**FILES, ".resolver/schedules.yml": schedules_file}
    github_api.add_repo(
        REPO, git_server.url_for(REPO), bare=create_bare_repo(git_server.root, REPO, files)
    )
    for key, value in github_settings(github_api, key_file).items():
        monkeypatch.setenv(key, value)
    reset_caches()
    with session_scope() as session:
        return repository(session, REPO, installation_id=INSTALLATION_ID).id


def test_a_broken_schedules_file_is_kept_as_the_repositorys_sync_error(
    resolver_env: ResolverEnv,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    import integrations.github.provider  # noqa: F401

    broken = "schedules:\n  - {name: x, cron: nope, prompt: y}\n"
    repo_id = _installed(broken, monkeypatch, github_api, git_server, key_file)
    assert sync_repo(repo_id, get_settings().sandbox_workspace_root, get_settings()) == []
    with session_scope() as session:
        error = repository(session, REPO).sync_error or ""
    assert "schedules[0]" in error and "cron" in error


def test_a_sync_that_fails_for_any_other_reason_is_kept_too_and_the_next_good_one_clears_it(
    resolver_env: ResolverEnv,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import integrations.github.provider  # noqa: F401

    repo_id = _installed(SCHEDULES_FILE, monkeypatch, github_api, git_server, key_file)
    not_a_folder = tmp_path / "workspaces-file"
    not_a_folder.write_text("")  # the workspace root is a file: no clone can be made there

    assert sync_repo(repo_id, not_a_folder / "root", get_settings()) == []
    with session_scope() as session:
        error = repository(session, REPO).sync_error
    # The kind of error only (its text names a path); the worker's log has all of it.
    assert error == "internal error: NotADirectoryError (the worker's log has the details)"
    [crashed] = [r for r in caplog.records if r.getMessage() == "schedule.sync_crashed"]
    assert crashed.exc_info is not None

    root = get_settings().sandbox_workspace_root
    assert sync_repo(repo_id, root, get_settings()) == ["added tidy"]
    with session_scope() as session:
        assert repository(session, REPO).sync_error is None


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_schedule_the_database_refuses_is_kept_as_the_sync_error_and_nothing_is_half_applied(
    resolver_env: ResolverEnv,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    import integrations.github.provider  # noqa: F401

    # PostgreSQL stores no NUL in text; the spec lets it through, the store refuses it.
    refused = SCHEDULES_FILE + '  - {name: nul, cron: "0 8 * * 5", prompt: "a \\0 b"}\n'
    repo_id = _installed(refused, monkeypatch, github_api, git_server, key_file)

    assert sync_repo(repo_id, get_settings().sandbox_workspace_root, get_settings()) == []
    with session_scope() as session:
        row = repository(session, REPO)
        # Not the statement and its parameters, which the database error's text holds.
        assert row.sync_error == "internal error: DataError (the worker's log has the details)"
        assert row.synced_at is not None and row.schedules == []


def test_a_local_shallow_clone_reads_the_file_without_a_checkout(tmp_path: Path) -> None:
    bare = create_bare_repo(tmp_path / "git", "o/r", {".resolver/schedules.yml": SCHEDULES_FILE})
    clone = git_repo.clone(f"file://{bare}", tmp_path / "shallow", shallow=True)
    assert [s.name for s in read_file(clone, "HEAD").schedules] == ["tidy"]
    assert sorted(path.name for path in clone.path.iterdir()) == [".git"]
    assert git_repo.git(clone, "rev-list", "--count", "HEAD").strip() == "1"
