"""The origin an MCP server's credential is bound to: read from the URL an operator gives, and
the only place the credential goes, whatever URL a repository's config names."""

from __future__ import annotations

import pytest

from resolver.contract.mcp import Origin, OriginError, credential_withheld, parse_origin


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://MCP.Tracker.example/mcp?x=1#y", "https://mcp.tracker.example"),
        ("https://mcp.tracker.example:443", "https://mcp.tracker.example"),
        ("https://mcp.tracker.example:8443/", "https://mcp.tracker.example:8443"),
        ("  http://localhost:8123/mcp ", "http://localhost:8123"),
        ("http://127.0.0.2:80/mcp", "http://127.0.0.2"),
        ("http://[::1]:9000", "http://[::1]:9000"),
    ],
)
def test_an_operators_url_gives_its_origin(given: str, origin: str) -> None:
    assert str(parse_origin(given)) == origin
    assert parse_origin(str(parse_origin(given))) == parse_origin(given)  # as stored, it reads


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("http://mcp.tracker.example/mcp", "plain http to another machine"),
        ("http://10.0.0.5:8080", "plain http to another machine"),
        ("http://localhost.attacker.example", "plain http to another machine"),
        ("https://user:pw@mcp.tracker.example", "user or a password"),
        ("ftp://mcp.tracker.example", "must be an https URL"),
        ("mcp.tracker.example", "must be an https URL"),
        ("https://mcp.tracker.example:99999", "no port"),
        ("https://mcp.tracker.example:0", "no port"),
        ("https://mcp.tracker.example\\@other.example/", "host in ASCII"),
        ("https://bücher.example", "host in ASCII"),
        ("", "give the server's URL"),
    ],
)
def test_a_url_a_credential_cannot_be_bound_to_is_refused(given: str, why: str) -> None:
    with pytest.raises(OriginError, match=why):
        parse_origin(given)


TRACKER = Origin("https", "mcp.tracker.example", 443)


def test_a_credential_goes_only_to_the_origin_it_is_bound_to() -> None:
    assert credential_withheld(TRACKER, "https://mcp.tracker.example", "tracker") is None
    other_host = credential_withheld(Origin("https", "evil.example", 443), str(TRACKER), "t")
    assert other_host == (
        "it is for https://mcp.tracker.example, and the repository's config names "
        "https://evil.example"
    )
    plain = credential_withheld(Origin("http", "mcp.tracker.example", 80), str(TRACKER), "t")
    assert plain is not None and "names http://mcp.tracker.example" in plain
    other_port = credential_withheld(
        Origin("https", "mcp.tracker.example", 8443), str(TRACKER), "t"
    )
    assert other_port is not None and "names https://mcp.tracker.example:8443" in other_port
    assert credential_withheld(None, str(TRACKER), "t") is not None  # a URL that does not read


def test_a_credential_stored_before_origins_is_not_sent_and_says_how_to_bind_it() -> None:
    unbound = credential_withheld(TRACKER, None, "tracker")
    assert unbound is not None
    assert "resolver mcp bind <repository> tracker <URL>" in unbound
    # A stored origin that no longer reads (plain http elsewhere) binds nothing either.
    odd = credential_withheld(
        Origin("http", "mcp.tracker.example", 80), "http://mcp.tracker.example", "t"
    )
    assert odd is not None and "bind it again" in odd
