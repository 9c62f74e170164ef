"""Forgejo's webhook side: signatures (Forgejo's and Gitea's headers), parsing, and every
recorded payload verified, parsed and routed; the route table and the fixtures agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integrations.forgejo.events import parse_event
from integrations.forgejo.routes import IGNORED, ROUTES
from integrations.forgejo.verify import verify_signature
from resolver.contract.inbound import MalformedError, Policy, SignatureError, route_event
from tests.integrations.forgejo.deliveries import (
    KNOWN,
    SECRET,
    fixture_key,
    fixture_paths,
    headers_for,
    sign,
)

POLICY = Policy(bot_name="resolver", trigger_label="resolver")
BODY = b'{"action": "created"}'


def test_a_good_forgejo_signature_passes() -> None:
    verify_signature({"x-forgejo-signature": sign(BODY)}, BODY, SECRET)


def test_a_good_gitea_signature_passes() -> None:
    verify_signature({"x-gitea-signature": sign(BODY)}, BODY, SECRET)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-forgejo-signature": ""},  # a hook without a secret
        {"x-forgejo-signature": sign(BODY, "another secret")},
        {"x-gitea-signature": sign(BODY + b" ")},
        {"x-forgejo-signature": "sha256=" + sign(BODY)},  # GitHub's prefix is not Forgejo's
        {"x-forgejo-signature": sign(BODY).upper()},
        {"x-hub-signature-256": "sha256=" + sign(BODY)},  # Forgejo sends it; we never read it
        {"x-forgejo-signature": "ü" * 64},
    ],
    ids=["missing", "empty", "other_secret", "other_body", "prefixed", "upper", "hub", "text"],
)
def test_a_bad_or_missing_signature_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(SignatureError):
        verify_signature(headers, BODY, SECRET)


def test_a_bad_forgejo_signature_is_not_rescued_by_a_good_gitea_one() -> None:
    headers = {"x-forgejo-signature": sign(BODY, "wrong"), "x-gitea-signature": sign(BODY)}
    with pytest.raises(SignatureError):
        verify_signature(headers, BODY, SECRET)


def test_the_key_is_the_event_type_and_the_action() -> None:
    headers = headers_for("pull_request_comment", BODY)
    headers["x-forgejo-event"] = "issue_comment"  # what Forgejo says of a pull request comment
    event = parse_event(headers, BODY)
    assert event.key == "pull_request_comment.created"
    assert event.delivery_key == headers["x-forgejo-delivery"]


def test_gitea_headers_alone_parse() -> None:
    headers = headers_for("issue_comment", BODY, gitea=True)
    event = parse_event(headers, BODY)
    assert (event.key, event.delivery_key) == ("issue_comment.created", headers["x-gitea-delivery"])


def test_without_an_event_type_the_event_header_names_it() -> None:
    headers = {"x-gitea-event": "push", "x-gitea-delivery": "d-1"}
    assert parse_event(headers, b'{"ref": "refs/heads/main"}').key == "push"


@pytest.mark.parametrize("missing", ["x-forgejo-delivery", "x-forgejo-event-type"])
def test_a_delivery_without_its_headers_is_malformed(missing: str) -> None:
    headers = {k: v for k, v in headers_for("push", BODY).items() if not k.startswith("x-gitea")}
    del headers[missing]
    if missing == "x-forgejo-event-type":
        del headers["x-forgejo-event"]
    with pytest.raises(MalformedError):
        parse_event(headers, BODY)


@pytest.mark.parametrize("body", [b"not json", b"[1]", b'{"action": "created", "x": "\\u0000"}'])
def test_a_body_that_is_no_storable_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedError):
        parse_event(headers_for("issue_comment", body), body)


PATHS = fixture_paths()


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
@pytest.mark.parametrize("gitea", [False, True], ids=["forgejo", "gitea"])
def test_every_fixture_verifies_parses_and_routes(path: Path, gitea: bool) -> None:
    body = path.read_bytes()
    headers = headers_for(fixture_key(path), body, gitea=gitea)
    verify_signature(headers, body, SECRET)
    event = parse_event(headers, body)
    assert event.key == fixture_key(path)
    route_event(ROUTES, event, POLICY)


def test_every_route_has_a_fixture() -> None:
    keys = {fixture_key(path) for path in PATHS}
    assert sorted(set(ROUTES) - keys) == []


def test_every_fixture_is_routed_or_ignored() -> None:
    assert [p.name for p in PATHS if fixture_key(p) not in KNOWN] == []
    assert all("__" in p.name for p in PATHS)


def test_routes_and_ignored_events_do_not_overlap() -> None:
    assert set(ROUTES).isdisjoint(IGNORED)


def test_the_fixtures_name_their_source() -> None:
    readme = (PATHS[0].parent / "README.md").read_text()
    assert "modules/structs/hook.go" in readme and "user/webhooks" in readme
    assert all(json.loads(p.read_text()) for p in PATHS)


def test_the_readme_names_every_routed_event_and_setting() -> None:
    readme = (PATHS[0].parents[1] / "README.md").read_text()
    assert [key for key in ROUTES if f"`{key}`" not in readme] == []
    for name in ("URL", "TOKEN", "WEBHOOK_SECRET", "CLIENT_ID", "CLIENT_SECRET", "HOOK_TYPE"):
        assert f"RESOLVER_FORGEJO_{name}" in readme
