"""The engine-free parts: mirror discovery, output truncation, names, the shell argv."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from resolver.agent.sandboxes import policy_from_settings
from resolver.core.settings import Settings
from sandbox import SandboxInfo, SandboxPolicy, image_tag
from sandbox.engine import SandboxError
from sandbox.files import workspace_path
from sandbox.image import base_mirrors
from sandbox.mirror import find_mirror, parse_deb822, parse_sources_list, render_sources
from sandbox.naming import check_job_id, job_name, job_of, pool_name, should_reap
from sandbox.output import OutputBuffer, truncate
from sandbox.policy import INIT_UID
from sandbox.shell import command_argv, parse_oom_kills

DEB822 = """\
Types: deb-src
URIs: http://src.example/debian
Suites: bookworm

Types: deb
# a comment
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
"""


def test_mirror_from_deb822_skips_sources_and_other_suites() -> None:
    assert parse_deb822(DEB822, "bookworm") == "http://mirror.example/debian"
    assert parse_deb822(DEB822, "trixie") is None
    disabled = "Types: deb\nURIs: http://off.example/\nSuites: bookworm\nEnabled: no\n"
    assert parse_deb822(disabled, "bookworm") is None


def test_mirror_from_one_line_sources() -> None:
    text = (
        "# deb http://commented.example/ bookworm main\n"
        "deb cdrom:[Debian]/ bookworm main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://one.example/debian bookworm main\n"
    )
    assert parse_sources_list(text, "bookworm") == "http://one.example/debian"


def test_find_mirror_prefers_deb822_files(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("deb http://old.example/debian bookworm main\n")
    assert find_mirror("bookworm", tmp_path) == "http://old.example/debian"
    (tmp_path / "sources.list.d" / "debian.sources").write_text(DEB822)
    assert find_mirror("bookworm", tmp_path) == "http://mirror.example/debian"


@pytest.mark.parametrize("signed_in", ["debian", "debian-security"])
def test_an_offline_base_refuses_a_mirror_given_with_a_password(
    tmp_path: Path, signed_in: str
) -> None:
    """debootstrap would leave it in the image (sources.list, apt's list files), where the
    agent reads it."""
    (tmp_path / "sources.list.d").mkdir()
    stanza = "Types: deb\nURIs: https://{}artifactory.example/{}\nSuites: {}\nComponents: main\n"
    written = [
        stanza.format("deploy:Art1factoryPassw0rd@" if path == signed_in else "", path, suite)
        for path, suite in (("debian", "bookworm"), ("debian-security", "bookworm-security"))
    ]
    (tmp_path / "sources.list.d" / "debian.sources").write_text("\n".join(written))
    with pytest.raises(SandboxError) as refused:
        base_mirrors(tmp_path)
    assert f"mirror https://artifactory.example/{signed_in} is given with a user" in str(
        refused.value
    )
    assert "Art1factoryPassw0rd" not in str(refused.value) and "deploy" not in str(refused.value)
    assert "build without --offline" in str(refused.value)


def test_an_offline_base_takes_the_mirror_and_its_security_one(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "deb http://m.example/debian bookworm main\n"
        "deb http://s.example/debian-security bookworm-security main\n"
    )
    assert base_mirrors(tmp_path) == (
        "http://m.example/debian",
        "http://s.example/debian-security",
    )


def test_base_sources_add_updates_and_security() -> None:
    assert render_sources("bookworm", "http://m/debian", "http://s/debian-security") == (
        "deb http://m/debian bookworm main\n"
        "deb http://m/debian bookworm-updates main\n"
        "deb http://s/debian-security bookworm-security main\n"
    )
    assert "security" not in render_sources("bookworm", "http://m/debian", None)


def test_output_under_the_limit_is_kept_whole() -> None:
    buffer = OutputBuffer(limit=100)
    buffer.feed("héllo ".encode())
    buffer.feed("wörld".encode())
    assert buffer.text() == "héllo wörld"


def test_streamed_output_keeps_head_and_tail_and_counts_the_cut() -> None:
    text = "".join(f"{n}é\n" for n in range(100_000))
    buffer = OutputBuffer(limit=1000)
    data = text.encode()
    for start in range(0, len(data), 4096):
        buffer.feed(data[start : start + 4096])
    assert buffer.text() == truncate(text, 1000)
    assert f"[... {len(text) - 1000} characters cut ...]" in buffer.text()


def test_names_carry_the_job() -> None:
    assert job_of(job_name("0123abcd", "42")) == "42"
    assert job_of("/" + job_name("0123abcd", "job-7.retry")) == "job-7.retry"
    assert job_of(pool_name("0123abcd")) is None
    for bad in ("", "-x", "a b", "a/b", "x" * 200):
        with pytest.raises(ValueError):
            check_job_id(bad)


def test_reap_decision() -> None:
    now = datetime.now(UTC)

    def info(name: str, state: str = "running", age: float = 10, owner: str = "a1") -> SandboxInfo:
        return SandboxInfo("id", name, state, now - timedelta(seconds=age), None, owner)

    def finished(job: str, owner: str | None) -> bool:
        return job == "done" or owner != "a1"

    assert should_reap(info(job_name("0123abcd", "done")), now, 3600, finished)
    assert not should_reap(info(job_name("0123abcd", "busy")), now, 3600, finished)
    assert should_reap(info(job_name("0123abcd", "busy"), age=4000), now, 3600, finished)
    assert should_reap(info(job_name("0123abcd", "busy"), state="exited"), now, 3600, finished)
    assert not should_reap(info(pool_name("0123abcd")), now, 3600, finished)
    assert should_reap(info(pool_name("0123abcd"), age=4000), now, 3600, finished)
    # Another attempt holds the job now: the dead worker's sandbox goes.
    assert should_reap(info(job_name("0123abcd", "busy"), owner="a0"), now, 3600, finished)


def test_command_argv_kills_the_group_at_the_timeout() -> None:
    argv = command_argv("tok", "echo hi", 2.5, None, {"A": "1"})
    assert argv[:4] == ["timeout", "-s", "KILL", "2.500"]
    assert argv[-2:] == ["echo hi", "A=1"]
    with pytest.raises(ValueError):
        command_argv("tok", "true", 1, None, {"A=B": "1"})


def test_oom_counter_of_cgroup_v1_and_v2() -> None:
    assert parse_oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3
    assert parse_oom_kills("low 0\nhigh 0\nmax 2\noom 2\noom_kill 2\n") == 2
    assert parse_oom_kills("") == 0


def test_workspace_paths() -> None:
    assert workspace_path("a/../b") == "/workspace/b"
    assert workspace_path("/workspace") == "/workspace"
    for outside in ("/workspacex", "..", "/tmp/x"):
        with pytest.raises(ValueError):
            workspace_path(outside)


def test_policy_from_settings() -> None:
    settings = Settings(
        secret_keys="0" * 43 + "=", sandbox_memory="1g", sandbox_pids=99, sandbox_network="bridge"
    )
    policy = policy_from_settings(settings)
    assert policy.image == image_tag()
    assert (policy.memory, policy.pids, policy.network) == ("1g", 99, "none")
    assert (
        policy_from_settings(Settings(secret_keys="0" * 43 + "=", sandbox_image="x:1")).image
        == "x:1"
    )


def test_the_agent_never_runs_as_its_sandboxs_init() -> None:
    """Its init's user is what keeps the agent's commands from ending their sandbox."""
    with pytest.raises(ValueError, match="cannot be 65534, its init's own"):
        SandboxPolicy(image="sandbox", user=INIT_UID)


def test_image_tag_is_a_hash_of_the_inputs() -> None:
    repository, digest = image_tag().split(":")
    assert repository == "resolver-sandbox"
    assert len(digest) == 12
    assert image_tag() == image_tag()
