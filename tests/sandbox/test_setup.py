"""A repository's setup step: what its config says, and how a failure reads."""

from __future__ import annotations

import pytest

from sandbox import Allowance, RepoSetupError, Sandbox, SandboxError, run_setup, setup_failure
from sandbox.setup import parse_repo_config


@pytest.mark.docker
def test_without_egress_setup_has_no_network_and_cannot_be_given_one(box: Sandbox) -> None:
    # tests/sandbox/test_egress.py runs setup under a list of its own, through a proxy.
    without = run_setup(box, "curl -sS -m 3 http://example.org/", timeout=60)
    assert without.exit_code != 0
    assert box.run("tail -n +3 /proc/net/dev | cut -d: -f1").output.split() == ["lo"]
    with pytest.raises(SandboxError, match="without egress"):
        box.allow(Allowance(("example.org",)))


@pytest.mark.docker
def test_failed_setup_is_a_clear_outcome(box: Sandbox) -> None:
    result = run_setup(box, "echo installing\necho broken >&2\nexit 3\n", timeout=60)
    assert result.exit_code == 3
    message = setup_failure(result)
    assert message is not None
    assert message.startswith(".resolver/setup.sh exited with code 3")
    assert "installing\nbroken" in message
    slow = run_setup(box, "sleep 30", timeout=1)
    assert (setup_failure(slow) or "").startswith(".resolver/setup.sh timed out")
    assert setup_failure(run_setup(box, "true", timeout=60)) is None


@pytest.mark.parametrize(
    ("text", "network"),
    [("", None), ("setup:\n  network: false\n", False), ("setup: {network: true}", True)],
)
def test_config_asks_for_network(text: str, network: bool | None) -> None:
    assert parse_repo_config(text) is network


@pytest.mark.parametrize("text", ["setup: [", "setup:\n  network: bridge\n", "- 1\n"])
def test_bad_config_is_refused_with_a_reason(text: str) -> None:
    with pytest.raises(RepoSetupError, match=r"config\.yml"):
        parse_repo_config(text)
