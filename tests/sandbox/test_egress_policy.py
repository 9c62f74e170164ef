"""The egress policy as data: domains, narrowing, Squid's log, attribution, and the registries
found in a host's own configuration. No engine needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox import (
    ANYWHERE,
    Allowance,
    EgressConfigError,
    narrow,
    parse_allowance,
    parse_domains,
    split_list,
)
from sandbox.egress import HostRecord, Window, command_at, record
from sandbox.registries import (
    find_registries,
    host_of,
    parse_pip_config,
    port_of,
    without_credentials,
)
from sandbox.squid import parse_log, render_allow, render_config


def test_domains_are_checked_and_cover_their_subdomains() -> None:
    assert parse_domains(["Example.org", "*.files.example.net", ".example.org."]) == (
        "example.org",
        "files.example.net",
    )
    assert split_list("a.example, b.example c.example") == ("a.example", "b.example", "c.example")
    allowed = Allowance(("example.org",))
    assert allowed.allows("example.org") and allowed.allows("files.example.org")
    assert not allowed.allows("badexample.org") and not allowed.allows("example.org.evil.test")


@pytest.mark.parametrize(
    "entry", ["", "10.0.0.1", "https://example.org/", "example.org:443", "ex*ample.org", "-a.org"]
)
def test_what_is_not_a_domain_is_refused_by_name(entry: str) -> None:
    with pytest.raises(EgressConfigError, match="domain"):
        parse_domains([entry])


def test_a_repository_gets_only_what_is_within_the_operators_maximum() -> None:
    maximum = Allowance(("example.org", "example.net"))
    granted, refused = narrow(maximum, ["files.example.org", "example.com", "example.net"])
    assert granted == Allowance(("files.example.org", "example.net"))
    assert refused == ("example.com",)
    assert narrow(ANYWHERE, ["example.com"]) == (Allowance(("example.com",), public_only=True), ())
    assert narrow(Allowance(), ["example.com"]) == (Allowance(), ("example.com",))


def test_an_allow_list_may_name_a_port_and_a_repository_keeps_it_within_the_domain() -> None:
    listed = parse_allowance("index.example.org:8080, example.net:443 example.net")
    assert listed == Allowance(
        ("index.example.org", "example.net"), ports=(("index.example.org", 8080),)
    )
    assert listed.describe() == "index.example.org, example.net, index.example.org:8080"
    granted, _ = narrow(listed, ["files.index.example.org", "example.net"])
    assert granted.ports == (("files.index.example.org", 8080),)
    for entry in ("example.org:0", "example.org:70000"):
        with pytest.raises(EgressConfigError, match="not a port"):
            parse_allowance(entry)
    for entry in ("example.org:ssh", "https://example.org", "10.0.0.1:80"):
        with pytest.raises(EgressConfigError, match=r"not a domain|IP address"):
            parse_allowance(entry)


def test_squid_holds_a_listed_domain_to_its_ports() -> None:
    config = render_config(
        Allowance(("example.org", "index.example.net"), ports=(("index.example.net", 8080),))
    )
    rules = [line for line in config.splitlines() if line.startswith("http_access")]
    assert rules == [
        "http_access allow listed !CONNECT plain_port",
        "http_access allow listed CONNECT tunnel_port",
        "http_access allow listed_8080 port_8080",
        "http_access deny all",
    ]
    assert "acl listed_8080 dstdomain -n .index.example.net\n" in config
    assert "acl plain_port port 80\n" in config and "acl tunnel_port port 443\n" in config


def test_squid_config_lists_domains_and_open_refuses_private_addresses() -> None:
    listed = Allowance(("example.org",))
    assert render_allow(listed) == ".example.org\n"
    assert "http_access allow listed" in render_config(listed)
    anywhere = render_config(ANYWHERE)
    assert "http_access deny private" in anywhere and "http_access allow all" in anywhere
    assert "deny private" not in render_config(listed)  # the operator's own list: their call


def test_a_repositorys_list_within_open_egress_keeps_open_s_refusal_of_private_addresses() -> None:
    """`open` reaches the public internet alone; a repository that narrows it to names of its
    choosing (the cloud's metadata service, the cluster's API) gets no more than that."""
    asked = ["metadata.google.internal", "kubernetes.default.svc.cluster.local"]
    granted, refused = narrow(ANYWHERE, asked)
    assert refused == () and granted.public_only
    config = render_config(granted)
    assert config.index("http_access deny private") < config.index("http_access allow listed")
    assert "169.254.0.0/16" in config and "127.0.0.0/8" in config
    again, _ = narrow(granted, ["metadata.google.internal"])  # narrowed again (setup, agent)
    assert again.public_only


# Lines as the job's Squid wrote them (logformat egress, sandbox/squid.py).
LOG = """\
1795657451.340 TCP_TUNNEL/200 CONNECT allowed.test allowed.test:443 2138
1795657453.132 TCP_DENIED/403 CONNECT denied.test denied.test:443 3450
1795657453.351 TCP_DENIED/403 GET denied.test http://denied.test/small 3456
1795657460.000 TCP_MISS/200 GET allowed.test http://allowed.test/hello 300
not a line of ours
"""


def test_the_access_log_becomes_counts_per_host_with_the_blocked_commands() -> None:
    entries = parse_log(LOG)
    assert [(e.host, e.status, e.blocked) for e in entries] == [
        ("allowed.test", 200, False),
        ("denied.test", 403, True),
        ("denied.test", 403, True),
        ("allowed.test", 200, False),
    ]
    windows = [Window(1795657450.0, 1795657453.2, "pip install foo")]
    windows.append(Window(1795657453.3, 1795657454.0, "curl http://denied.test/small"))
    hosts: dict[str, HostRecord] = {}
    record(hosts, entries, windows)
    assert hosts["allowed.test"].as_dict() == {"allowed": 2, "blocked": 0, "commands": []}
    assert hosts["denied.test"].commands == ["pip install foo", "curl http://denied.test/small"]
    assert command_at(windows, 1795657470.0) is None  # between commands: a background process


def test_pip_config_lines_give_the_index_and_extras() -> None:
    text = (
        "global.index-url='https://pypi.example.org/simple'\n"
        ":env:.extra-index-url='https://extra.example.org/simple file:///opt/wheels'\n"
    )
    assert parse_pip_config(text) == (
        "https://pypi.example.org/simple",
        ["https://extra.example.org/simple", "file:///opt/wheels"],
    )
    assert host_of("file:///opt/wheels") is None
    assert host_of("https://10.0.0.1/simple") is None
    assert host_of("https://User@Mirror.Example.org:8443/debian") == "mirror.example.org"
    assert port_of("https://User@Mirror.Example.org:8443/debian") == ("mirror.example.org", 8443)
    assert port_of("https://pypi.example.org:443/simple") is None
    assert port_of("http://pypi.example.org/simple") is None
    assert port_of("http://pypi.example.org:99999/simple") is None


def test_registries_come_from_the_hosts_own_pip_npm_and_apt_configuration(tmp_path: Path) -> None:
    (tmp_path / "pip.conf").write_text(
        "[global]\nindex-url = https://pypi.example.org/simple\n"
        "extra-index-url = http://index.example.org:8080/simple\n"
    )
    (tmp_path / "npmrc").write_text("registry=https://npm.example.org/\n")
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://deb.example.org/debian\nSuites: bookworm\n\n"
        "Types: deb\nURIs: http://off.example.org/debian\nSuites: bookworm\nEnabled: no\n"
    )
    (apt / "sources.list").write_text("deb [arch=amd64] https://security.example.org/ bookworm\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "NPM_", "npm_"))},
        "PIP_CONFIG_FILE": str(tmp_path / "pip.conf"),
        "NPM_CONFIG_USERCONFIG": str(tmp_path / "npmrc"),
    }
    found = find_registries(env, apt)
    assert {"pypi.example.org", "deb.example.org", "security.example.org"} <= set(found.hosts)
    assert "off.example.org" not in found.hosts
    assert found.ports == (("index.example.org", 8080),)
    assert found.env["PIP_INDEX_URL"] == "https://pypi.example.org/simple"
    if "npm.example.org" in found.hosts:  # npm is optional on a worker's host
        assert found.env["npm_config_registry"] == "https://npm.example.org/"


def test_a_private_indexs_credentials_never_reach_the_sandbox(tmp_path: Path) -> None:
    """The sandbox's tools are pointed at the host's index, never given its password: the
    agent and the repository's code could read it there, and it is no secret of the job's."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "NPM_", "npm_"))},
        "PIP_CONFIG_FILE": str(tmp_path / "none.conf"),
        "NPM_CONFIG_USERCONFIG": str(tmp_path / "none.npmrc"),
        "PIP_INDEX_URL": "https://deploy:Zq81mPpk2TgYw@pypi.corp.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://token@extra.corp.example:8443/simple",
    }
    found = find_registries(env, tmp_path / "no-apt")
    assert found.env["PIP_INDEX_URL"] == "https://pypi.corp.example/simple"
    assert found.env["PIP_EXTRA_INDEX_URL"] == "https://extra.corp.example:8443/simple"
    assert "Zq81mPpk2TgYw" not in repr(found) and "token" not in repr(found.env)
    assert {"pypi.corp.example", "extra.corp.example"} <= set(found.hosts)
    assert without_credentials("https://a:b@h.example/x?y=1") == "https://h.example/x?y=1"
