"""Bitbucket's webhook side: the signature (`X-Hub-Signature: sha256=…`), a hook without a
secret, parsing Cloud's and Data Center's headers, and every recorded payload verified, parsed
and routed; the route table and the fixtures agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integrations.bitbucket.events import parse_event
from integrations.bitbucket.routes import IGNORED, ROUTES
from integrations.bitbucket.verify import verify_signature
from resolver.contract.inbound import MalformedError, Policy, SignatureError, route_event
from tests.integrations.bitbucket.deliveries import (
    KNOWN,
    SECRET,
    fixture_key,
    fixture_paths,
    headers_for,
    sign,
)

POLICY = Policy(bot_name="resolver", trigger_label="resolver")
BODY = b'{"actor": {}}'


def test_a_good_signature_passes() -> None:
    verify_signature({"x-hub-signature": sign(BODY)}, BODY, SECRET, unsigned=False)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-hub-signature": ""},
        {"x-hub-signature": sign(BODY, "another secret")},
        {"x-hub-signature": sign(BODY + b" ")},
        {"x-hub-signature": sign(BODY).removeprefix("sha256=")},  # no prefix
        {"x-hub-signature": "sha1=" + sign(BODY).removeprefix("sha256=")},
        {"x-hub-signature": "sha256=" + sign(BODY).removeprefix("sha256=").upper()},
        {"x-hub-signature-256": sign(BODY)},  # GitHub's header is not Bitbucket's
        {"x-hub-signature": "sha256=" + "ü" * 64},
    ],
    ids=[
        "missing",
        "empty",
        "other_secret",
        "other_body",
        "bare",
        "sha1",
        "upper",
        "github",
        "text",
    ],
)
def test_a_bad_or_missing_signature_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(SignatureError):
        verify_signature(headers, BODY, SECRET, unsigned=False)


def test_without_a_secret_a_delivery_is_refused_unless_the_operator_allows_it() -> None:
    with pytest.raises(SignatureError, match="no Bitbucket webhook secret"):
        verify_signature({}, BODY, None, unsigned=False)
    verify_signature({}, BODY, None, unsigned=True)


def test_allowing_unsigned_deliveries_never_excuses_a_missing_signature_once_a_secret_is_set() -> (
    None
):
    with pytest.raises(SignatureError):
        verify_signature({}, BODY, SECRET, unsigned=True)


def test_the_key_is_the_event_key_and_the_delivery_the_request_uuid() -> None:
    cloud = headers_for("pullrequest:comment_created", BODY)
    event = parse_event(cloud, BODY)
    assert (event.key, event.delivery_key) == (
        "pullrequest:comment_created",
        cloud["x-request-uuid"],
    )
    server = headers_for("pr:comment:added", BODY)
    assert "x-request-uuid" not in server
    assert parse_event(server, BODY).delivery_key == server["x-request-id"]


@pytest.mark.parametrize("missing", ["x-event-key", "x-request-uuid"])
def test_a_delivery_without_its_headers_is_malformed(missing: str) -> None:
    headers = headers_for("repo:push", BODY)
    del headers[missing]
    with pytest.raises(MalformedError):
        parse_event(headers, BODY)


@pytest.mark.parametrize("body", [b"not json", b"[1]", b'{"x": "\\u0000"}'])
def test_a_body_that_is_no_storable_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedError):
        parse_event(headers_for("repo:push", body), body)


PATHS = fixture_paths()


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_fixture_verifies_parses_and_routes(path: Path) -> None:
    body = path.read_bytes()
    headers = headers_for(fixture_key(path), body)
    verify_signature(headers, body, SECRET, unsigned=False)
    event = parse_event(headers, body)
    assert event.key == fixture_key(path)
    route_event(ROUTES, event, POLICY)


def test_every_route_has_a_fixture() -> None:
    keys = {fixture_key(path) for path in PATHS}
    assert sorted(set(ROUTES) - keys) == []


def test_every_fixture_is_routed_or_ignored() -> None:
    assert [p.name for p in PATHS if fixture_key(p) not in KNOWN.values()] == []
    assert all("__" in p.name for p in PATHS)


def test_routes_and_ignored_events_do_not_overlap() -> None:
    assert set(ROUTES).isdisjoint(IGNORED)


def test_the_fixtures_name_their_source() -> None:
    readme = (PATHS[0].parent / "README.md").read_text()
    assert "bitbucket-cloud/docs/event-payloads" in readme
    assert "bitbucketserver/event-payload" in readme
    assert all(json.loads(p.read_text()) for p in PATHS)


def test_the_readme_names_every_routed_event_and_setting() -> None:
    readme = (PATHS[0].parents[1] / "README.md").read_text()
    assert [key for key in ROUTES if f"`{key}`" not in readme] == []
    for name in ("API_URL", "WEB_URL", "TOKEN", "WEBHOOK_SECRET", "ALLOW_UNSIGNED", "CLIENT_ID"):
        assert f"RESOLVER_BITBUCKET_{name}" in readme
