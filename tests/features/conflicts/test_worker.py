"""`@bot rebase` and `conflicts: fix` without a stack: which pull requests it takes, what it
pushes to a real git origin, when it leaves a branch alone, and how a job with many pull
requests ends. The agent's sandbox is never started: a clean merge needs none, and an agent's
resolution is handed to the after-agent hook as the tree it would have written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resolver.agent import git as git_repo
from resolver.agent.merge import merge_trees
from resolver.agent.session import SessionResult, Work
from resolver.agent.task import AgentResult
from resolver.contract import outbound as providers
from resolver.contract.triggers import read_trigger
from resolver.core.job import JobContext, RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.features.conflicts import worker as conflicts
from resolver.features.conflicts.contract import MAX_FILES_NAMED, UNRESOLVED_KEY
from resolver.features.conflicts.worker import fix as conflicts_fix
from resolver.worker.values import Plan, Snapshot, Stop
from tests.agent.conftest import git, make_repo
from tests.conftest import ResolverEnv

BRANCH = "resolver/fix-a"
HUMAN = ("-c", "user.name=Ada", "-c", "user.email=ada@example.com")
AUTHOR = ("Ada", "ada@example.com")


def bot_email() -> str:
    return f"{get_settings().bot_name}@users.noreply"


def commit(repo: Path, branch: str, files: dict[str, str], *who: str) -> str:
    git(repo, "checkout", "-q", branch)
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, *(who or HUMAN), "commit", "-qm", f"change {', '.join(files)}")
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    return head


def origin(tmp_path: Path, on_main: dict[str, str], *who: str) -> Path:
    """`main` and the bot's branch both start from one commit; the branch changes `a.txt`,
    `main` then changes `on_main`."""
    repo = make_repo(tmp_path / "origin", {"a.txt": "one\ntwo\nthree\n", "b.txt": "b\n"})
    git(repo, "branch", BRANCH)
    commit(repo, BRANCH, {"a.txt": "one\nTWO\nthree\n"}, *who)
    if on_main:
        commit(repo, "main", on_main)
    return repo


def plan_for(repo: Path) -> Plan:
    info = providers.RepoInfo("octo/widgets", str(repo), "main")
    return Plan("github", info, "main", BRANCH, BRANCH, True, "https://forge.test/pull/7")


def snapshot(**trigger: Any) -> Snapshot:
    return Snapshot(
        1, "github", "rebase", "octo/widgets", "ada", None, read_trigger(trigger), None, None
    )


def update(repo: Path, gate: conflicts.Gate | None = None) -> RunResult:
    return conflicts.update(
        JobContext(1, get_settings()), snapshot(), plan_for(repo), {}, AUTHOR, gate
    )


def branch_head(repo: Path) -> str:
    return git(repo, "rev-parse", BRANCH).strip()


def agent(outcome: str = "changed_code", summary: str = "Kept both sides.") -> AgentResult:
    return AgentResult(outcome, summary, None, 3, 0.01, 10, 5)  # type: ignore[arg-type]


# Which pull requests `@bot rebase` takes.


class OnePull:
    """The part of a forge `_plan` asks: one pull request."""

    def __init__(self, pull: providers.PullInfo) -> None:
        self.pull = pull

    def get_pull(self, full_name: str, number: int) -> providers.PullInfo:
        assert (full_name, number) == ("octo/widgets", self.pull.number)
        return self.pull


def plan(trigger: dict[str, Any], pull: providers.PullInfo) -> Plan:
    repo = providers.RepoInfo("octo/widgets", "https://forge.test/octo/widgets.git", "trunk")
    forge: Any = OnePull(pull)
    return conflicts._plan(snapshot(repo="octo/widgets", **trigger), forge, "github", repo)


def test_rebase_takes_the_bots_own_pull_request_onto_its_base() -> None:
    pull = providers.PullInfo(7, "https://forge.test/pull/7", BRANCH, "release")
    found = plan({"number": 7, "is_pull_request": True}, pull)
    assert (found.base, found.branch, found.checkout) == ("release", BRANCH, BRANCH)
    assert found.update and found.pr_url == pull.url


def test_rebase_of_a_pull_request_without_a_base_uses_the_default_branch() -> None:
    pull = providers.PullInfo(7, "https://forge.test/pull/7", BRANCH)
    assert plan({"number": "7", "is_pull_request": True}, pull).base == "trunk"


def test_rebase_refuses_a_pull_request_somebody_else_opened() -> None:
    pull = providers.PullInfo(7, "https://forge.test/pull/7", "ada/feature", "main")
    with pytest.raises(Stop) as stopped:
        plan({"number": 7, "is_pull_request": True}, pull)
    assert stopped.value.outcome == Outcome.REFUSED
    assert "not mine" in str(stopped.value)


def test_rebase_refuses_a_forks_pull_request_that_names_its_branch_as_the_bots() -> None:
    """A fork's branch is never the bot's, whatever its name."""
    pull = providers.PullInfo(7, "https://forge.test/pull/7", BRANCH, "main", fetch_ref="refs/x")
    with pytest.raises(Stop) as stopped:
        plan({"number": 7, "is_pull_request": True}, pull)
    assert stopped.value.outcome == Outcome.REFUSED
    assert "not mine" in str(stopped.value)


@pytest.mark.parametrize(
    "trigger",
    [{"number": 7}, {"is_pull_request": True}, {"number": "seven", "is_pull_request": True}],
)
def test_rebase_outside_a_pull_request_says_where_to_ask(trigger: dict[str, Any]) -> None:
    pull = providers.PullInfo(7, "https://forge.test/pull/7", BRANCH)
    with pytest.raises(Stop) as stopped:
        plan(trigger, pull)
    assert stopped.value.outcome == Outcome.COULD_NOT
    assert "pull request I opened" in str(stopped.value)


# What is pushed to the origin.


def test_a_clean_merge_is_pushed_as_a_fast_forward_merge_commit_by_the_bot(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {"b.txt": "B\n"})
    before, main = branch_head(repo), git(repo, "rev-parse", "main").strip()
    result = update(repo)
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.CHANGED_CODE)
    assert result.result["summary"] == f"Merged `main` into `{BRANCH}`; git found no conflicts."
    assert result.result["files_total"] == 1
    pushed = branch_head(repo)
    assert git(repo, "rev-parse", f"{pushed}^1", f"{pushed}^2").split() == [before, main]
    assert git(repo, "show", f"{pushed}:a.txt") == "one\nTWO\nthree\n"
    assert git(repo, "show", f"{pushed}:b.txt") == "B\n"
    assert git(repo, "log", "-1", "--format=%ae %s", pushed).strip() == (
        f"{bot_email()} Merge branch 'main' into {BRANCH}"
    )
    assert "Co-authored-by: Ada <ada@example.com>" in git(repo, "log", "-1", "--format=%b", pushed)


def test_a_branch_that_has_its_base_already_is_left_as_it_is(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {})
    before = branch_head(repo)
    result = update(repo)
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.NO_CHANGES)
    assert result.result["summary"] == f"`{BRANCH}` already has everything on `main`."
    assert branch_head(repo) == before


# When `conflicts: fix` leaves a branch alone (the gate), before the agent is asked.


def test_conflicts_fix_leaves_a_branch_that_still_merges_cleanly(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {"b.txt": "B\n"})
    before = branch_head(repo)
    result = update(
        repo, conflicts_fix._gate(plan_for(repo), 7, conflicts.bot_from(get_settings()))
    )
    assert result.outcome == Outcome.NO_CHANGES
    assert result.result["summary"] == f"`{BRANCH}` still merges cleanly with `main`"
    assert branch_head(repo) == before


def test_conflicts_fix_never_merges_over_a_humans_push_to_the_branch(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {"a.txt": "one\n2\nthree\n"})
    before = branch_head(repo)
    result = update(
        repo, conflicts_fix._gate(plan_for(repo), 7, conflicts.bot_from(get_settings()))
    )
    assert result.outcome == Outcome.NO_CHANGES
    assert result.result["summary"] == (
        f"someone else pushed to `{BRANCH}` (its head {before[:12]} is not mine): left to them"
    )
    assert branch_head(repo) == before


def test_conflicts_fix_tries_once_per_base_commit_per_pull_request(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    bot = ("-c", f"user.name={get_settings().bot_name}", "-c", f"user.email={bot_email()}")
    repo = origin(tmp_path, {"a.txt": "one\n2\nthree\n"}, *bot)
    main = git(repo, "rev-parse", "main").strip()
    plan = plan_for(repo)
    with git_repo.private_clone(str(repo), tmp_path / "clones", BRANCH) as clone:
        ours = git_repo.head(clone)
        first = conflicts_fix._gate(plan, 7, conflicts.bot_from(get_settings()))(
            clone, ours, main, ("a.txt",)
        )
        again = conflicts_fix._gate(plan, 7, conflicts.bot_from(get_settings()))(
            clone, ours, main, ("a.txt",)
        )
        other_pull = conflicts_fix._gate(plan, 8, conflicts.bot_from(get_settings()))(
            clone, ours, main, ("a.txt",)
        )
    assert first is None and other_pull is None
    assert again == f"already updated once for `main` at {main[:12]}"


# An agent's resolution of a conflicted merge.


def conflicted(repo: Path, tmp_path: Path) -> tuple[git_repo.Clone, str, str, str]:
    """A private clone of `repo`, the bot's branch head, main's head and the conflicted tree."""
    clone = git_repo.clone(str(repo), tmp_path / "clone", branch=BRANCH)
    ours = git_repo.head(clone)
    theirs = git(repo, "rev-parse", "main").strip()
    merge = merge_trees(clone, ours, theirs)
    assert merge.conflicts == ("a.txt",)
    return clone, ours, theirs, merge.tree


def tree_with(clone: git_repo.Clone, tree: str, path: str, text: str) -> str:
    """`tree` with `path` replaced by `text`, as the agent's change would write it."""
    blob = git_repo.git(clone, "hash-object", "-w", "--stdin", stdin=text.encode()).strip()
    listing = git_repo.git(clone, "ls-tree", tree).splitlines()
    entries = [line for line in listing if not line.endswith(f"\t{path}")]
    entries.append(f"100644 blob {blob}\t{path}")
    return git_repo.git(clone, "mktree", stdin=("\n".join(entries) + "\n").encode()).strip()


def resolution(repo: Path, ours: str, theirs: str) -> conflicts._Resolution:
    title = f"Merge branch 'main' into {BRANCH}"
    return conflicts._Resolution(
        plan_for(repo),
        {},
        AUTHOR,
        (ours, theirs),
        ("a.txt",),
        title,
        conflicts.bot_from(get_settings()),
    )


def test_a_resolution_without_markers_is_pushed_as_the_merge_commit(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {"a.txt": "one\n2\nthree\n"})
    clone, ours, theirs, tree = conflicted(repo, tmp_path)
    resolved = tree_with(clone, tree, "a.txt", "one\nTWO (2)\nthree\n")
    hook = resolution(repo, ours, theirs)
    hook.after(Work(clone, ours, resolved), agent())
    result = hook.result(SessionResult(agent(), diff="+TWO (2)\n"))
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.CHANGED_CODE)
    pushed = branch_head(repo)
    assert git(repo, "rev-parse", f"{pushed}^1", f"{pushed}^2").split() == [ours, theirs]
    assert git(repo, "show", f"{pushed}:a.txt") == "one\nTWO (2)\nthree\n"
    assert "Kept both sides." in git(repo, "log", "-1", "--format=%B", pushed)


def test_a_resolution_that_leaves_markers_pushes_nothing_and_names_the_files(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {"a.txt": "one\n2\nthree\n"})
    clone, ours, theirs, tree = conflicted(repo, tmp_path)
    hook = resolution(repo, ours, theirs)
    hook.after(Work(clone, ours, tree), agent())
    result = hook.result(SessionResult(agent(summary="Done."), diff="+x\n"))
    assert branch_head(repo) == ours
    assert (result.state, result.outcome) == (JobState.FAILED, Outcome.COULD_NOT)
    assert result.error == (
        f"I could not merge `main` into `{BRANCH}`: the conflicts in `a.txt` are not resolved, "
        "so nothing was pushed. The agent said: Done."
    )
    assert result.result["conflicts"] == ["a.txt"]
    assert result.result[UNRESOLVED_KEY]["base_sha"] == theirs


def test_an_agent_that_could_not_resolve_leaves_every_conflicted_file_named(
    resolver_env: ResolverEnv, tmp_path: Path
) -> None:
    repo = origin(tmp_path, {"a.txt": "one\n2\nthree\n"})
    clone, ours, theirs, tree = conflicted(repo, tmp_path)
    resolved = tree_with(clone, tree, "a.txt", "one\nTWO\nthree\n")
    hook = resolution(repo, ours, theirs)
    hook.after(Work(clone, ours, resolved), agent("could_not", ""))
    result = hook.result(SessionResult(agent("could_not", ""), diff=""))
    assert branch_head(repo) == ours
    assert result.state == JobState.FAILED
    assert result.error is not None and result.error.endswith("so nothing was pushed.")
    assert result.result["conflicts"] == ["a.txt"]


# The agent's instruction, and how a `conflicts: fix` job with many pull requests ends.


def test_the_instruction_names_the_conflicted_files_and_how_to_finish() -> None:
    files = tuple(f"src/f{n}.py" for n in range(MAX_FILES_NAMED * 5 + 3))
    text = conflicts.build_resolve_instruction("main", BRANCH, files)
    assert f"Merging `main` into this pull request's branch `{BRANCH}`" in text
    assert "- src/f0.py\n" in text and f"- src/f{MAX_FILES_NAMED * 5 - 1}.py\n" in text
    assert f"src/f{MAX_FILES_NAMED * 5}.py" not in text
    assert "finish with changed_code" in text and "finish with could_not" in text


def ended(state: JobState, outcome: Outcome, summary: str, error: str | None = None) -> RunResult:
    return RunResult(state, outcome, error=error, result={"summary": summary})


def test_a_push_that_updated_one_pull_request_changed_code_and_lists_each() -> None:
    result = conflicts_fix._combined(
        {
            "7": ended(JobState.SUCCEEDED, Outcome.CHANGED_CODE, "merged"),
            "8": ended(JobState.SUCCEEDED, Outcome.NO_CHANGES, "still merges cleanly"),
        }
    )
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.CHANGED_CODE)
    assert result.result["pulls"]["7"]["summary"] == "merged"
    assert result.result["pulls"]["8"]["outcome"] == str(Outcome.NO_CHANGES)


def test_a_push_that_failed_on_any_pull_request_fails_naming_it() -> None:
    result = conflicts_fix._combined(
        {
            "7": ended(JobState.SUCCEEDED, Outcome.CHANGED_CODE, "merged"),
            "8": ended(JobState.FAILED, Outcome.COULD_NOT, "", error="conflicts left"),
        }
    )
    assert (result.state, result.outcome) == (JobState.FAILED, Outcome.COULD_NOT)
    assert result.error == "#8: conflicts left"
    assert set(result.result["pulls"]) == {"7", "8"}


def test_a_push_with_no_pull_request_of_mine_changed_nothing() -> None:
    result = conflicts_fix._combined({})
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.NO_CHANGES)
    assert result.result == {"pulls": {}}
