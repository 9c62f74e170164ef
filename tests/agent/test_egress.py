"""A job's egress policy from the operator's settings and the repository's config, and how its
record reads for people and for the model. Pure: tests/sandbox/test_egress.py enforces it."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet

from resolver.agent.egress import blocked_notes, egress_level, job_egress, shown_command
from resolver.agent.events import Event, Kind
from resolver.agent.render import render_event
from resolver.agent.tools import bash_observation
from resolver.core.settings import Settings
from sandbox import NOTHING, Allowance, EgressConfigError, ExecResult, HostRecord

KEY = Fernet.generate_key().decode()


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, secret_keys=KEY, **values)


ALLOWLIST = {"sandbox_egress": "allowlist", "sandbox_egress_allow": "example.org, example.net"}


def test_none_is_the_default_and_needs_no_proxy() -> None:
    egress = job_egress(settings(), {})
    assert (egress.setup, egress.agent, egress.needed) == (NOTHING, NOTHING, False)


def test_each_phase_gets_the_maximum_unless_the_repository_narrows_it() -> None:
    config = {"network": {"setup": ["files.example.org"], "agent": []}}
    egress = job_egress(settings(**ALLOWLIST), config)
    assert egress.setup == Allowance(("files.example.org",))
    assert egress.agent == NOTHING
    assert egress.refused == ()
    unnamed = job_egress(settings(**ALLOWLIST), {"network": {"agent": ["example.net"]}})
    assert unnamed.setup == Allowance(("example.org", "example.net"))


def test_a_repository_cannot_widen_the_operators_maximum() -> None:
    config = {"network": {"agent": ["example.org", "example.com"]}}
    egress = job_egress(settings(**ALLOWLIST), config)
    assert egress.agent == Allowance(("example.org",))
    assert egress.refused == (
        "`.resolver/config.yml` asked for `example.com` during agent; this Resolver allows at "
        "most `RESOLVER_SANDBOX_EGRESS=allowlist`, so it was refused.",
    )


def test_the_older_settings_keep_their_meaning() -> None:
    assert egress_level(settings(sandbox_network="bridge")) == "open"
    assert job_egress(settings(sandbox_network="bridge"), {}).agent.anywhere
    assert job_egress(settings(**ALLOWLIST), {}, setup_network=False).setup == NOTHING
    asked = job_egress(settings(), {}, setup_network=True)
    assert asked.setup == NOTHING and "`network` during setup" in asked.refused[0]


@pytest.mark.parametrize(
    "network",
    [["example.org"], {"build": ["example.org"]}, {"agent": "example.org"}, {"agent": [1]}],
)
def test_a_malformed_network_section_is_refused_by_name(network: object) -> None:
    with pytest.raises(EgressConfigError, match=r"config\.yml: `network`"):
        job_egress(settings(**ALLOWLIST), {"network": network})


def test_allowlist_without_domains_is_a_clear_error() -> None:
    with pytest.raises(EgressConfigError, match="RESOLVER_SANDBOX_EGRESS_ALLOW"):
        job_egress(settings(sandbox_egress="allowlist"), {})
    with pytest.raises(EgressConfigError, match="not a domain"):
        job_egress(settings(sandbox_egress="allowlist", sandbox_egress_allow="http://x/"), {})


def test_blocked_hosts_read_as_one_line_each_with_the_command() -> None:
    hosts = {
        "files.example.org": HostRecord(0, 3, ["pip install foo", "pip  install\n`bar`"]),
        "example.net": HostRecord(1, 1, []),
        "example.org": HostRecord(4, 0, []),
    }
    assert blocked_notes(hosts) == (
        "blocked: files.example.org, 3 requests, during `pip install foo` and 1 other command",
        "blocked: example.net, 1 request",
    )
    assert shown_command("x" * 100).endswith("…") and len(shown_command("x" * 100)) == 80


def test_the_model_is_told_a_block_is_policy_not_a_flaky_network() -> None:
    result = ExecResult(56, "curl: (56) CONNECT tunnel failed, response 403\n", 0.1, False)
    seen = bash_observation(
        ExecResult(**{**result.__dict__, "blocked": ("files.example.org",)}), 30
    )
    assert seen.content.endswith(
        "(the sandbox's egress policy blocked files.example.org; it is not allowed, "
        "not a network fault)"
    )
    assert seen.details["blocked"] == ["files.example.org"]
    assert "egress" not in bash_observation(result, 30).content


def test_the_egress_event_reads_per_host_in_the_trajectory() -> None:
    payload = {
        "setup": "example.org",
        "agent": "no host",
        "hosts": {"example.org": {"allowed": 2, "blocked": 1, "commands": ["pip install foo"]}},
        "refused": [],
    }
    assert render_event(Event(7, Kind.EGRESS, payload)) == [
        "#7 egress: setup example.org; agent no host",
        "  example.org: 2 allowed, 1 blocked (pip install foo)",
    ]
