"""The git side of the conflicts tests, the same on every forge: the bot's branch, commits a
person pushes, and what the model does with a conflict."""

from __future__ import annotations

import tempfile
from pathlib import Path

from integrations.standin.git_http import IDENTITY, branch_head, run_git
from tests.e2e.stack import FIXED
from tests.support.llm_server import Reply, finish, tool

BRANCH = "resolver/7-add-subtracts"
REBASE = "@resolver rebase"
MAIN_CALC = "def add(a, b):\n    return a - b  # subtracts\n"
RESOLVED = "def add(a, b):\n    return a + b  # adds\n"
OPT_IN = {".resolver/config.yml": "conflicts: fix\n"}
README = {"README.md": "# widgets\n"}


def commit_to(bare: Path, branch: str, files: dict[str, str], message: str) -> str:
    """Commit `files` (folders made as needed) on top of `branch` of the bare repository, as a
    person would push it; the new head."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        run_git("clone", "--quiet", "--branch", branch, str(bare), str(work))
        for name, text in files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        run_git("add", "-A", cwd=work)
        run_git(*IDENTITY, "commit", "--quiet", "-m", message, cwd=work)
        run_git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=work)
    head = branch_head(bare, branch)
    assert head is not None
    return head


def bots_branch(bare: Path) -> str:
    """`BRANCH`: the bot's fix of add() on top of the first commit of main; its head."""
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    return commit_to(bare, BRANCH, {"calc.py": FIXED}, "Fix add()")


def parents(bare: Path, commit: str) -> list[str]:
    return run_git("--git-dir", str(bare), "rev-list", "--parents", "-n", "1", commit).split()[1:]


def is_ancestor(bare: Path, older: str, newer: str) -> bool:
    done = run_git("--git-dir", str(bare), "rev-list", newer)
    return older in done.split()


def show(bare: Path, commit: str, path: str) -> str:
    return run_git("--git-dir", str(bare), "show", f"{commit}:{path}")


def resolves() -> list[Reply]:
    """The model's part: it counts the conflict markers, then writes the resolution."""
    return [
        tool("execute_bash", command="grep -c '<<<<<<<' calc.py"),
        tool("str_replace_editor", command="create", path="calc.py", file_text=RESOLVED),
        finish("changed_code", "Kept the fix and main's comment."),
    ]


def leaves_markers() -> list[Reply]:
    """The model's part: it says it resolved the conflict, yet the markers are still there."""
    return [
        tool(
            "str_replace_editor",
            command="str_replace",
            path="calc.py",
            old_str="def add(a, b):\n",
            new_str="def add(a, b):  # merged\n",
        ),
        finish("changed_code", "Resolved."),
    ]
