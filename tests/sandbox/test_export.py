"""The change leaves the sandbox as data, once the agent's container is gone (real Docker)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from sandbox import ChangeRejectedError, ExportLimits, Sandbox, SandboxError, SandboxPolicy
from tests.sandbox.conftest import docker_inspect

pytestmark = pytest.mark.docker

BASE_REPO = """
set -e
git init -q -b main . && git config user.name t && git config user.email t@e.x
printf 'x = 1\\n' > app.py && printf 'old\\n' > old.txt && printf '#!/bin/sh\\n' > run.sh
printf '__pycache__/\\n' > .gitignore
git add -A && git commit -qm base
git ls-tree -r -z --full-tree HEAD > /tmp/listing
"""


def base(box: Sandbox) -> bytes:
    """A committed repository in the sandbox's workspace; returns its `ls-tree` listing."""
    made = box.run(BASE_REPO)
    assert made.ok, made.output
    return box.run("cat /tmp/listing").output.encode()


def test_a_change_comes_out_as_data_and_the_agents_git_is_ignored(box: Sandbox) -> None:
    listing = base(box)
    work = box.run(
        """
        printf 'x = 2\\n' > app.py && rm old.txt && chmod +x run.sh
        mkdir -p pkg && printf 'new\\n' > pkg/new.py && ln -s /etc/passwd pkg/link
        mkdir -p __pycache__ && printf 'junk' > __pycache__/a.pyc
        printf '#!/bin/sh\\ntouch /tmp/hooked\\n' > .git/hooks/pre-commit
        git config core.fsmonitor 'touch /tmp/fsmonitor'
        rm -f .git/index && ln -s /dev/zero .git/index
        rm -rf .git/objects/*
        """
    )
    assert work.ok, work.output
    change = box.export(listing, ExportLimits())
    assert docker_inspect(box.container_id) == {}
    files = {changed.path: (changed.mode, changed.data) for changed in change.files}
    assert files == {
        "app.py": ("100644", b"x = 2\n"),
        "run.sh": ("100755", b"#!/bin/sh\n"),
        "pkg/new.py": ("100644", b"new\n"),
        "pkg/link": ("120000", b"/etc/passwd"),
    }
    assert change.deleted == ("old.txt",)
    assert change.stopped_processes == 0 and change.skipped == ()


def test_a_background_writer_is_stopped_before_the_work_is_read(box: Sandbox) -> None:
    listing = base(box)
    writer = "while :; do date +%N >> late.txt; sleep 0.01; done"
    box.run(f"setsid nohup bash -c '{writer}' >/dev/null 2>&1 &")
    box.run("sleep 0.3")
    change = box.export(listing, ExportLimits())
    assert change.stopped_processes >= 1
    assert [changed.path for changed in change.files] == ["late.txt"]
    assert docker_inspect(box.container_id) == {}


def test_a_file_over_the_cap_is_refused_by_name_and_size(box: Sandbox) -> None:
    listing = base(box)
    box.run("head -c 3145728 /dev/zero > big.bin")
    limits = ExportLimits(max_file_bytes=2**20)
    with pytest.raises(ChangeRejectedError, match=r"`big.bin` is 3 MB, over the limit of 1 MB"):
        box.export(listing, limits)


def test_too_many_files_are_refused(box: Sandbox) -> None:
    listing = base(box)
    box.run("for n in $(seq 30); do echo $n > f$n; done")
    with pytest.raises(ChangeRejectedError, match="more than 20 files"):
        box.export(listing, ExportLimits(max_files=20))


def test_the_workspace_has_a_quota(
    open_box: Callable[[SandboxPolicy], Sandbox], policy: SandboxPolicy
) -> None:
    box = open_box(policy)  # a 64 MB workspace
    full = box.run("head -c 100000000 /dev/zero > fill.bin")
    assert full.exit_code != 0 and "No space left on device" in full.output
    assert box.run("df --output=size -B1M /workspace | tail -1").output.strip() == "64"


def test_nested_repositories_are_left_out_and_named(box: Sandbox) -> None:
    listing = base(box)
    box.run(
        "mkdir vendored && cd vendored && git init -q && echo x > f && printf 'y\\n' > ../top.txt"
    )
    change = box.export(listing, ExportLimits())
    assert [changed.path for changed in change.files] == ["top.txt"]
    assert change.skipped == ("vendored/",)


def test_a_sandbox_that_died_yields_no_change_rather_than_an_empty_one(box: Sandbox) -> None:
    listing = base(box)
    # Killed from outside: its own commands cannot end it (tests/sandbox/test_lost.py).
    subprocess.run(["docker", "kill", box.container_id], check=True, capture_output=True)
    with pytest.raises(SandboxError, match="stopped before its work could be read"):
        box.export(listing, ExportLimits())
