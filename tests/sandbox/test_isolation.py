"""What a sandbox cannot do: reach a network, use capabilities, write its root, see secrets."""

from __future__ import annotations

import os

import pytest

from sandbox import Sandbox
from sandbox.runtime import HOST_TASKS_BASE, HOST_TASKS_PER_PROCESS
from tests.sandbox.conftest import RUNTIME, docker_inspect

pytestmark = pytest.mark.docker

CONNECT = """
import socket, sys
for host, port in [("1.1.1.1", 53), ("8.8.8.8", 443), ("172.17.0.1", 80), ("10.0.0.1", 22)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        print("connected", host)
    except OSError as error:
        print("refused", host, error)
"""


def test_no_network_connect_to_any_address_fails(box: Sandbox) -> None:
    result = box.run(f"python3 -c '{CONNECT}'")
    assert result.exit_code == 0, result.output
    assert "connected" not in result.output
    assert result.output.count("refused") == 4
    interfaces = box.run("tail -n +3 /proc/net/dev | cut -d: -f1").output.split()
    assert interfaces == ["lo"]


def test_runs_as_uid_1000_without_capabilities(box: Sandbox) -> None:
    # prctl, not /proc/self/status: gVisor's status file has no NoNewPrivs line.
    no_new_privs = "python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'"
    status = box.run(f"id -u; grep -E '^(CapEff|CapPrm|CapBnd)' /proc/self/status; {no_new_privs}")
    lines = status.output.split()
    assert lines[0] == "1000"
    assert lines[1:] == ["CapPrm:", "0" * 16, "CapEff:", "0" * 16, "CapBnd:", "0" * 16, "1"]


def test_mount_and_chown_fail(box: Sandbox) -> None:
    mount = box.run("mkdir -p /tmp/m && mount -t tmpfs none /tmp/m")
    assert mount.exit_code != 0
    assert "permission denied" in mount.output.lower() or "must be superuser" in mount.output
    chown = box.run("touch f && chown 0:0 f")
    assert chown.exit_code != 0
    assert "Operation not permitted" in chown.output
    assert box.run("stat -c %u f").output.strip() == "1000"


def test_root_filesystem_is_read_only_but_tmp_home_and_workspace_are_writable(box: Sandbox) -> None:
    root = box.run("awk '$2 == \"/\" { print $4 }' /proc/mounts").output.split(",")
    assert "ro" in root
    for path in ("/usr/bin/x", "/etc/x", "/x"):
        result = box.run(f"touch {path}")
        assert result.exit_code != 0
        # gVisor checks the permission (EACCES) before the mount (EROFS); runc the other way.
        assert "Read-only file system" in result.output or "Permission denied" in result.output
    writable = box.run("touch /tmp/a ~/b /workspace/c && echo ok")
    assert writable.output.strip() == "ok"
    assert box.read_file("c") == b""


def test_no_secrets_in_inspect_or_pid_1_environment(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "resolver-test-secret-" + os.urandom(8).hex()
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    monkeypatch.setenv("RESOLVER_LLM_API_KEY", secret)
    inspected = docker_inspect(box.container_id)
    names = {item.split("=", 1)[0] for item in inspected["Config"]["Env"]}
    assert names <= {"PATH", "HOME", "LANG", "DEBIAN_FRONTEND", "PIP_DISABLE_PIP_VERSION_CHECK"}
    assert secret not in str(inspected)
    mounts = [(mount["Type"], mount.get("Name")) for mount in inspected["Mounts"]]
    assert mounts == [("volume", box.volume)]
    environ = box.run("tr '\\0' '\\n' < /proc/1/environ; env").output
    assert secret not in environ
    assert "TOKEN" not in environ and "KEY" not in environ
    socket = box.run("ls -l /var/run/docker.sock /run/docker.sock")
    assert socket.exit_code != 0


def test_policy_is_what_docker_inspect_reports(box: Sandbox) -> None:
    host = docker_inspect(box.container_id)["HostConfig"]
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges:true"]
    assert host["ReadonlyRootfs"] is True
    assert host["Privileged"] is False
    # The workspace (tmpfs) counts as memory, so the limit makes room for it.
    assert host["Memory"] == (256 + 64) * 1024 * 1024
    if RUNTIME == "runsc":  # gVisor's kernel counts processes; the host bounds its sentry
        assert host["Ulimits"] == [{"Name": "nproc", "Soft": 128, "Hard": 128}]
        assert host["PidsLimit"] == 128 * HOST_TASKS_PER_PROCESS + HOST_TASKS_BASE
    else:
        assert host["PidsLimit"] == 128
    assert host["NanoCpus"] == 1_000_000_000
    assert docker_inspect(box.container_id)["Config"]["Labels"]["resolver.job"] == box.job_id
