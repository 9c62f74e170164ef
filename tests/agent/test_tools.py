"""Tool calls: argument checking, the editor's commands and their errors, bash observations."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from resolver.agent.editor import EditArgs, EditError, FileEditor
from resolver.agent.tools import ToolRunner, bash_observation, parse_arguments
from sandbox import ExecResult


class DirFiles:
    """The editor's port over a host directory that stands in for /workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _host(self, path: str) -> Path:
        return self.root / path.removeprefix("/workspace").lstrip("/")

    def read_file(self, path: str) -> bytes:
        return self._host(path).read_bytes()

    def write_file(self, path: str, data: bytes) -> None:
        target = self._host(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def list_dir(self, path: str) -> list[str]:
        entries = self._host(path).iterdir()
        return sorted(p.name + ("/" if p.is_dir() else "") for p in entries)

    def run(
        self,
        command: str,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        local = command.replace("/workspace", str(self.root))
        done = subprocess.run(local, shell=True, capture_output=True, text=True, check=False)
        return ExecResult(done.returncode, done.stdout + done.stderr, 0.0, False)


@pytest.fixture
def files(tmp_path: Path) -> DirFiles:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\nb = 2\nc = 3\nb = 2\n")
    return DirFiles(tmp_path)


def edit(editor: FileEditor, **args: object) -> str:
    return editor.execute(EditArgs.from_dict(args))


def test_view_numbers_lines_and_honours_a_range(files: DirFiles) -> None:
    editor = FileEditor(files)
    assert edit(editor, command="view", path="src/app.py", view_range=[2, 3]) == (
        "     2\tb = 2\n     3\tc = 3"
    )
    assert edit(editor, command="view", path="/workspace/src/app.py", view_range=[4, -1]) == (
        "     4\tb = 2\n     5\t"
    )
    with pytest.raises(EditError, match="outside the file"):
        edit(editor, command="view", path="src/app.py", view_range=[9, 10])
    with pytest.raises(EditError, match="two line numbers"):
        edit(editor, command="view", path="src/app.py", view_range=["1", 2])


def test_view_lists_a_directory(files: DirFiles) -> None:
    assert edit(FileEditor(files), command="view", path="/workspace") == (
        "Entries of /workspace:\nsrc/"
    )


def test_str_replace_needs_exactly_one_match(files: DirFiles) -> None:
    editor = FileEditor(files)
    with pytest.raises(EditError, match=r"occurs 2 times .*\(lines 2, 4\)"):
        edit(editor, command="str_replace", path="src/app.py", old_str="b = 2", new_str="b = 5")
    with pytest.raises(EditError, match="does not occur verbatim"):
        edit(editor, command="str_replace", path="src/app.py", old_str="d = 4", new_str="")
    result = edit(editor, command="str_replace", path="src/app.py", old_str="c = 3", new_str="c=9")
    assert "     3\tc=9" in result
    assert (files.root / "src/app.py").read_text() == "a = 1\nb = 2\nc=9\nb = 2\n"


def test_insert_and_undo(files: DirFiles) -> None:
    editor = FileEditor(files)
    edit(editor, command="insert", path="src/app.py", insert_line=0, new_str="# top")
    assert (files.root / "src/app.py").read_text().startswith("# top\na = 1")
    assert edit(editor, command="undo_edit", path="src/app.py") == (
        "Undid the last edit of /workspace/src/app.py"
    )
    assert (files.root / "src/app.py").read_text().startswith("a = 1")
    with pytest.raises(EditError, match="No edit"):
        edit(editor, command="undo_edit", path="src/app.py")


def test_undoing_a_create_removes_the_file(files: DirFiles) -> None:
    editor = FileEditor(files)
    assert edit(editor, command="create", path="new/mod.py", file_text="x = 1\n") == (
        "Created /workspace/new/mod.py (1 lines)"
    )
    edit(editor, command="undo_edit", path="new/mod.py")
    assert not (files.root / "new/mod.py").exists()


def test_paths_outside_the_workspace_are_refused(files: DirFiles) -> None:
    with pytest.raises(EditError, match="outside /workspace"):
        edit(FileEditor(files), command="view", path="../etc/passwd")


def test_missing_files_and_binary_files_are_explained(files: DirFiles) -> None:
    (files.root / "blob").write_bytes(b"\xff\xfe\x00")
    editor = FileEditor(files)
    with pytest.raises(EditError, match="does not exist"):
        edit(editor, command="view", path="nope.py")
    with pytest.raises(EditError, match="not UTF-8"):
        edit(editor, command="view", path="blob")


@pytest.mark.parametrize(
    ("tool", "raw", "message"),
    [
        ("rm_rf", "{}", "Unknown tool 'rm_rf'. The tools are: execute_bash"),
        ("execute_bash", '{"command": "ls"', "are not valid JSON"),
        ("execute_bash", "[1]", "must be a JSON object"),
        ("execute_bash", "{}", "missing command"),
        ("execute_bash", '{"command": 5}', "command must be of type string"),
        ("finish", '{"outcome": "done", "summary": "x"}', "outcome must be one of changed_code"),
        ("str_replace_editor", '{"command": "view", "path": "a", "view_range": "1"}', "array"),
    ],
)
def test_bad_calls_become_error_observations(
    files: DirFiles, tool: str, raw: str, message: str
) -> None:
    assert isinstance(parse_arguments(tool, raw), str)
    observation = ToolRunner(files, 1000, 10).run(tool, raw, seconds_left=60)
    assert observation.error and message in observation.content


def test_finish_carries_the_outcome(files: DirFiles) -> None:
    raw = json.dumps({"outcome": "answered", "summary": "42"})
    observation = ToolRunner(files, 1000, 10).run("finish", raw, seconds_left=60)
    assert observation.finish is not None and observation.finish.outcome == "answered"


def test_bash_observation_reports_how_a_command_ended() -> None:
    ok = bash_observation(ExecResult(0, "hi\n", 0.1, False), 30)
    assert (ok.content, ok.error) == ("hi\n[exit code: 0]", False)
    failed = bash_observation(ExecResult(2, "", 0.1, False), 30)
    assert (failed.content, failed.error) == ("[exit code: 2]", True)
    slow = bash_observation(ExecResult(137, "x", 30.0, True), 30)
    assert slow.error and "timed out after 30 s" in slow.content
    stopped = bash_observation(ExecResult(137, "", 1.0, False, cancelled=True), 30)
    assert "interrupted" in stopped.content
