"""The runtime a sandbox runs under: chosen from what the engine has, and seen from inside."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from resolver.cli.doctor import _sandbox_runtime as doctor_runtime
from resolver.core.settings import Settings
from sandbox import Sandbox
from sandbox.runtime import RuntimeMissingError, Runtimes, choose_runtimes
from tests.sandbox.conftest import DEPLOYMENT, RUNTIME

GVISOR = frozenset({"runc", "runsc", "runsc-hostinet"})
GVISOR_KERNEL = "4.4.0"


def test_runc_is_runc_whatever_the_engine_has() -> None:
    assert choose_runtimes("runc", GVISOR) == Runtimes("runc", "runc")


def test_auto_takes_gvisor_where_the_engine_has_it() -> None:
    assert choose_runtimes("auto", GVISOR) == Runtimes("runsc", "runsc-hostinet")
    assert choose_runtimes("auto", frozenset({"runc"})) == Runtimes("runc", "runc")


def test_auto_without_the_network_variant_keeps_jobs_with_network_on_runc() -> None:
    assert choose_runtimes("auto", frozenset({"runc", "runsc"})) == Runtimes("runsc", "runc")


@pytest.mark.parametrize("registered", [{"runc"}, {"runc", "runsc"}, {"runc", "runsc-hostinet"}])
def test_runsc_refuses_an_engine_without_it_and_says_how_to_add_it(registered: set[str]) -> None:
    with pytest.raises(RuntimeMissingError) as caught:
        choose_runtimes("runsc", frozenset(registered))
    message = str(caught.value)
    assert "daemon.json" in message
    assert '"runtimeArgs": ["--network=none"]' in message
    assert "apt-get install runsc" in message


def test_the_sandbox_runs_on_the_kernel_of_its_runtime(box: Sandbox) -> None:
    kernel = box.run("uname -r").output.strip()
    if box.policy.runtime == "runsc":
        assert kernel == GVISOR_KERNEL
    else:
        assert kernel != GVISOR_KERNEL


def test_doctor_reports_the_runtime_read_from_inside_a_sandbox(image: str) -> None:
    settings = _settings(image, sandbox_runtime=RUNTIME)
    check = doctor_runtime(settings)
    got = "runsc (gVisor)" if RUNTIME == "runsc" else "runc (the host's kernel)"
    assert check.status == "ok", check.detail
    assert check.detail.startswith(f"{RUNTIME}: {got}, kernel ")


def _settings(image: str, **values: str) -> Settings:
    key = Fernet.generate_key().decode()
    return Settings(
        _env_file=None, secret_keys=key, sandbox_image=image, deployment_id=DEPLOYMENT, **values
    )
