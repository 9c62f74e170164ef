"""The job page's record of a job's network: the policy, each host, blocked ones first."""

from __future__ import annotations

from resolver.web.steps import block_of


def test_the_network_block_puts_blocked_hosts_first_with_their_commands() -> None:
    payload = {
        "setup": "pypi.example.org",
        "agent": "pypi.example.org",
        "hosts": {
            "pypi.example.org": {"allowed": 12, "blocked": 0, "commands": []},
            "files.example.org": {"allowed": 0, "blocked": 3, "commands": ["pip install foo"]},
        },
        "refused": ["evil.example.net is beyond the operator's egress"],
    }
    block = block_of(7, "egress", payload, None)
    assert block is not None and block.failed
    assert block.title == "Network · 3 request(s) blocked"
    lines = block.text.splitlines()
    assert lines[:3] == [
        "setup could reach: pypi.example.org",
        "agent could reach: pypi.example.org",
        "refused for this repository: evil.example.net is beyond the operator's egress",
    ]
    assert lines[3] == "files.example.org: 0 allowed, 3 blocked · during pip install foo"
    assert lines[4] == "pypi.example.org: 12 allowed, 0 blocked"


def test_a_job_whose_sandbox_sent_nothing_says_so() -> None:
    block = block_of(1, "egress", {"setup": "no host", "agent": "no host", "hosts": {}}, None)
    assert block is not None and not block.failed and block.title == "Network"
    assert block.text.endswith("no request went out")
