"""Running commands and moving files: what the agent's tools see."""

from __future__ import annotations

import hashlib
import os
import resource

import pytest

from sandbox import Sandbox
from sandbox.files import MAX_READ_BYTES
from tests.sandbox.conftest import leftovers

pytestmark = pytest.mark.docker


def test_output_exit_code_and_stderr_are_combined(box: Sandbox) -> None:
    result = box.run("echo out; echo err >&2; exit 3")
    assert result.exit_code == 3
    assert result.output == "out\nerr\n"
    assert not (result.timed_out or result.oom_killed or result.cancelled)
    assert result.duration > 0


def test_large_output_is_truncated_with_a_marker(box: Sandbox) -> None:
    result = box.run("seq 1 200000")
    total = sum(len(str(n)) + 1 for n in range(1, 200_001))
    cut = total - 2000
    assert f"\n[... {cut} characters cut ...]\n" in result.output
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.endswith("199999\n200000\n")
    assert len(result.output) < 2100


def test_working_directory_and_exports_persist_between_calls(box: Sandbox) -> None:
    box.run("mkdir -p sub/deeper && cd sub && export GREETING='hello there' && LOCAL=1")
    result = box.run('pwd; echo "$GREETING"; echo "[${LOCAL:-}]"')
    assert result.output == "/workspace/sub\nhello there\n[]\n"
    box.run("cd deeper; exit 4")
    assert box.run("pwd").output == "/workspace/sub/deeper\n"


def test_cwd_and_env_arguments(box: Sandbox) -> None:
    box.run("mkdir -p pkg")
    result = box.run('pwd; echo "$A $B"', cwd="pkg", env={"A": "x y", "B": "$(id)"})
    assert result.output == "/workspace/pkg\nx y $(id)\n"
    with pytest.raises(ValueError):
        box.run("true", env={"BAD NAME": "1"})


def test_binary_file_round_trips(box: Sandbox) -> None:
    data = os.urandom(3 * 1024 * 1024) + bytes(range(256))
    box.write_file("out/data.bin", data)
    assert box.read_file("/workspace/out/data.bin") == data
    digest = box.run("sha256sum out/data.bin | cut -d' ' -f1").output.strip()
    assert digest == hashlib.sha256(data).hexdigest()
    owners = box.run("stat -c %u out out/data.bin").output.split()
    assert owners == ["1000", "1000"]


def test_rewriting_a_file_keeps_it_executable(box: Sandbox) -> None:
    box.write_file("run.sh", b"#!/bin/sh\necho one\n")
    box.run("chmod 755 run.sh")
    box.write_file("run.sh", b"#!/bin/sh\necho two\n")
    assert box.run("./run.sh").output == "two\n"


def test_list_dir_marks_directories(box: Sandbox) -> None:
    box.run("mkdir -p src && touch README.md .hidden src/a.py")
    assert box.list_dir(".") == [".hidden", "README.md", "src/"]
    assert box.list_dir("/workspace/src") == ["a.py"]
    with pytest.raises(FileNotFoundError):
        box.list_dir("missing")
    with pytest.raises(NotADirectoryError):
        box.list_dir("README.md")


def test_missing_files_and_directories_raise_the_usual_errors(box: Sandbox) -> None:
    box.run("mkdir -p dir")
    with pytest.raises(FileNotFoundError):
        box.read_file("nope.txt")
    with pytest.raises(IsADirectoryError):
        box.read_file("dir")


@pytest.mark.parametrize("path", ["/etc/passwd", "../etc/passwd", "/workspace/../root", "/"])
def test_paths_outside_the_workspace_are_refused(box: Sandbox, path: str) -> None:
    with pytest.raises(ValueError, match="outside /workspace"):
        box.read_file(path)
    with pytest.raises(ValueError, match="outside /workspace"):
        box.write_file(path, b"x")


def test_symlinks_are_followed_only_inside_the_workspace(box: Sandbox) -> None:
    box.run("echo inside > real.txt && ln -s real.txt link && ln -s /etc/passwd escape")
    assert box.read_file("link") == b"inside\n"
    with pytest.raises(ValueError, match="outside /workspace"):
        box.read_file("escape")


def test_background_jobs_outlive_their_command_without_holding_it(box: Sandbox) -> None:
    result = box.run("sleep 30 & echo started")
    assert result.output == "started\n"
    assert result.duration < 5
    assert leftovers(box) == ["sleep 30"]


def test_a_command_that_kills_the_sessions_shell_gets_a_new_one(box: Sandbox) -> None:
    box.run("cd /tmp && export KEPT=yes")
    result = box.run("read -r _ _ _ shell _ < /proc/$PPID/stat; kill -KILL $shell; sleep 30")
    assert result.exit_code == 137
    assert not result.timed_out
    assert leftovers(box) == []
    assert box.run('pwd; echo "$KEPT"').output == "/tmp\nyes\n"


def test_a_nul_byte_cannot_be_passed(box: Sandbox) -> None:
    result = box.run("echo a\0b")
    assert result.exit_code == 1
    assert "NUL" in result.output
    assert box.run("echo fine").output == "fine\n"


def test_a_file_too_large_to_bring_to_the_host_is_refused_with_a_way_out(box: Sandbox) -> None:
    box.run(f"head -c {MAX_READ_BYTES + 1} /dev/zero > big.bin")
    with pytest.raises(OSError, match="larger than 10 MB; read a part of it with execute_bash"):
        box.read_file("big.bin")


def test_a_worker_holding_many_descriptors_still_runs_commands(box: Sandbox) -> None:
    # A worker with dozens of jobs holds more than select()'s 1024 descriptors; the session's
    # next shell then gets a socket past it.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this host allows {hard} descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        box.run("read -r _ _ _ shell _ < /proc/$PPID/stat; kill -KILL $shell")
        assert box.run("echo past 1024").output == "past 1024\n"
        assert box.run("echo again").output == "again\n"
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
