"""Property-based fuzzing of every route: never a 500, and never a job without a signature."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integrations.deliveries import (
    PROVIDERS,
    SENDERS,
    fixture_key,
    fixture_paths,
    own_sending,
    post,
    sender,
    signed,
)

FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HEADER_NAMES = [
    "X-GitHub-Event",
    "X-GitHub-Delivery",
    "X-GitHub-Hook-ID",
    "X-Hub-Signature-256",
    "X-Hub-Signature",
    "X-Gitlab-Event",
    "X-Gitlab-Token",
    "Idempotency-Key",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "X-Slack-Request-Timestamp",
    "X-Slack-Signature",
    "X-Atlassian-Webhook-Identifier",
    "Linear-Signature",
    "Linear-Delivery",
    "Content-Length",
]
ANSWERS = {200, 202, 204, 400, 401, 413}

header_values = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"),
    max_size=80,
).map(lambda text: text.strip().encode("latin-1"))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
bodies = st.one_of(
    st.binary(max_size=600),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.sampled_from([b"", b"{}", b"[]", b"null", b'{"type": "url_verification"}']),
)


def mutate(payload: Any, path: list[int], value: Any) -> Any:
    """Replace one value somewhere inside the payload, chosen by `path`."""
    if not path or not isinstance(payload, dict | list) or not payload:
        return value
    keys = list(payload) if isinstance(payload, dict) else list(range(len(payload)))
    key = keys[path[0] % len(keys)]
    payload[key] = mutate(payload[key], path[1:], value)
    return payload


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(
    headers=st.dictionaries(st.sampled_from(HEADER_NAMES), header_values, max_size=6),
    body=bodies,
)
def test_arbitrary_requests_never_500_and_never_make_jobs(
    client: Any, store: Any, provider: str, headers: dict[str, bytes], body: bytes
) -> None:
    headers.pop("Content-Length", None)
    response = client.post(f"/webhooks/{provider}", content=body, headers=headers)
    assert response.status_code in ANSWERS
    assert store.jobs() == []


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(data=st.data(), value=json_values, path=st.lists(st.integers(0, 50), max_size=5))
def test_signed_mutations_of_real_payloads_never_500(
    client: Any, store: Any, provider: str, data: st.DataObject, value: Any, path: list[int]
) -> None:
    store.link(provider, sender(provider))
    fixture = data.draw(st.sampled_from(fixture_paths(provider)))
    payload = mutate(json.loads(fixture.read_text()), path, value)
    body = payload if isinstance(payload, dict) else json.dumps(payload).encode()
    response = post(client, signed(provider, fixture_key(provider, fixture), body))
    assert response.status_code in ANSWERS


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(
    text=st.text(max_size=300),
    key=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30),
)
def test_signed_comments_and_event_names_never_500(
    client: Any, store: Any, provider: str, text: str, key: str
) -> None:
    store.link(provider, sender(provider))  # so that triggers go all the way to a job
    fixture = next(
        p
        for p in fixture_paths(provider)
        if "comment" in p.name.lower() or "note" in p.name.lower() or "mention" in p.name.lower()
    )
    payload = json.loads(fixture.read_text())
    _set_text(provider, payload, "@resolver " + text)
    event = key if provider in ("github", "gitlab") and key else fixture_key(provider, fixture)
    assert post(client, signed(provider, event, payload)).status_code in ANSWERS


def _set_text(provider: str, payload: dict[str, Any], text: str) -> None:
    if provider not in SENDERS:
        own_sending(provider).set_text(payload, text)
    elif provider == "github":
        payload["comment"]["body"] = text
    elif provider == "gitlab":
        payload["object_attributes"]["note"] = text
    elif provider == "slack":
        payload["event"]["text"] = text
    elif provider == "jira":
        payload["comment"]["body"] = text
    else:
        payload["data"]["body"] = text
