"""GitLab: notes, label triggers, token and Standard Webhooks authentication, duplicates."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from integrations.gitlab.verify import check_standard_signature
from resolver.contract.inbound import SignatureError
from resolver.contract.triggers import ForgeIssue, PullRequest, ReviewBatch, read_trigger
from tests.integrations.deliveries import SECRETS, gitlab, load, post, standard_webhook_headers


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("gitlab", "1", "root")
    return store


def note(text: str, fixture: str = "Note_Hook__on_issue") -> dict[str, Any]:
    payload = load("gitlab", fixture)
    payload["object_attributes"]["note"] = text
    return payload


def labels(fixture: str, previous: list[str], current: list[str]) -> dict[str, Any]:
    payload = load("gitlab", fixture)
    payload["changes"]["labels"] = {
        "previous": [{"id": i, "title": t} for i, t in enumerate(previous)],
        "current": [{"id": i, "title": t} for i, t in enumerate(current)],
    }
    return payload


def test_standard_webhooks_known_answer_vector() -> None:
    headers = {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    check_standard_signature(headers, b'{"test": 2432232314}', secret, now=1614265330)
    with pytest.raises(SignatureError):
        check_standard_signature(headers, b'{"test": 2432232315}', secret, now=1614265330)
    with pytest.raises(SignatureError):  # the same delivery replayed six minutes later
        check_standard_signature(headers, b'{"test": 2432232314}', secret, now=1614265330 + 360)


def test_note_on_an_issue(webhook_client: Any, linked: Any) -> None:
    response = post(webhook_client, gitlab("Note Hook", note("@resolver please fix the export")))
    assert response.status_code == 202
    [job] = linked.jobs()
    assert (job.source, job.repo, job.task) == (
        "gitlab",
        "gitlab-org/gitlab-test",
        "please fix the export",
    )
    assert job.conversation_key == "gitlab:gitlab-org/gitlab-test#17"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, ForgeIssue) and trigger.repo.default_branch == "master"
    assert trigger.repo.clone_url == "http://example.com/gitlab-org/gitlab-test.git"
    assert trigger.number == 17 and trigger.comment_id == 1241 and trigger.reach["project_id"] == 5


def test_note_on_a_merge_request(webhook_client: Any, linked: Any) -> None:
    payload = note("@resolver rebase onto master", "Note_Hook__on_merge_request")
    assert post(webhook_client, gitlab("Note Hook", payload)).status_code == 202
    [job] = linked.jobs()
    assert job.conversation_key == "gitlab:gitlab-org/gitlab-test!1"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, PullRequest)
    assert trigger.head_ref == "master" and trigger.base_ref == "markdown"


def test_diff_note_carries_its_position(webhook_client: Any, linked: Any) -> None:
    payload = note("@resolver simplify this", "Note_Hook__diff_note_on_merge_request")
    assert post(webhook_client, gitlab("Note Hook", payload)).status_code == 202
    [job] = linked.jobs()
    part = read_trigger(job.trigger).part
    assert part["note_type"] == "DiffNote"
    position = part["position"]
    assert isinstance(position, dict) and position["new_line"] == 14 and part["discussion_id"]


@pytest.mark.parametrize("note_type", ["DiffNote", "DiscussionNote"])
def test_a_thread_mention_on_the_bots_merge_request_is_a_review_batch(
    webhook_client: Any, linked: Any, note_type: str
) -> None:
    payload = note("@resolver address these", "Note_Hook__diff_note_on_merge_request")
    payload["object_attributes"]["type"] = note_type
    payload["merge_request"]["source_branch"] = "resolver/7-fix-add"
    assert post(webhook_client, gitlab("Note Hook", payload)).status_code == 202
    [job] = linked.jobs()
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, ReviewBatch) and trigger.part["mention_discussion"]
    assert trigger.part["discussion_id"] is None  # its status goes to the merge request


def test_thread_mentions_elsewhere_are_single_requests(webhook_client: Any, linked: Any) -> None:
    """Someone else's merge request, or a plain note on the bot's: only the mention itself."""
    others = note("@resolver simplify this", "Note_Hook__diff_note_on_merge_request")
    plain = note("@resolver rebase", "Note_Hook__on_merge_request")
    plain["merge_request"]["source_branch"] = "resolver/7-fix-add"
    for payload in (others, plain):
        assert post(webhook_client, gitlab("Note Hook", payload)).status_code == 202
    assert [read_trigger(job.trigger).kind for job in linked.jobs()] == ["pull_request"] * 2


def test_confidential_notes_are_routed_too(webhook_client: Any, linked: Any) -> None:
    payload = note("@resolver fix", "Confidential_Note_Hook__on_issue")
    assert post(webhook_client, gitlab("Confidential Note Hook", payload)).status_code == 202


@pytest.mark.parametrize("fixture", ["Note_Hook__on_commit", "Note_Hook__on_snippet"])
def test_notes_elsewhere_are_ignored(webhook_client: Any, linked: Any, fixture: str) -> None:
    assert (
        post(webhook_client, gitlab("Note Hook", note("@resolver fix", fixture))).status_code == 204
    )
    assert linked.jobs() == []


@pytest.mark.parametrize("change", [{"action": "update"}, {"system": True}])
def test_edited_and_system_notes_are_ignored(webhook_client: Any, linked: Any, change: Any) -> None:
    payload = note("@resolver fix")
    payload["object_attributes"].update(change)
    assert post(webhook_client, gitlab("Note Hook", payload)).status_code == 204


def test_trigger_label_newly_added_to_an_issue(webhook_client: Any, linked: Any) -> None:
    payload = labels("Issue_Hook__labels_changed", ["API"], ["API", "resolver"])
    assert post(webhook_client, gitlab("Issue Hook", payload)).status_code == 202
    [job] = linked.jobs()
    assert job.task.startswith("New API: create/update/delete file")
    assert job.conversation_key == "gitlab:gitlabhq/gitlab-test#23"


def test_trigger_label_newly_added_to_a_merge_request(webhook_client: Any, linked: Any) -> None:
    payload = labels("Merge_Request_Hook__opened", [], ["resolver"])
    assert post(webhook_client, gitlab("Merge Request Hook", payload)).status_code == 202
    assert linked.jobs()[0].conversation_key == "gitlab:gitlabhq/gitlab-test!1"


@pytest.mark.parametrize(
    ("previous", "current"), [(["resolver"], ["resolver", "API"]), (["API"], ["Platform"])]
)
def test_label_changes_without_a_newly_added_trigger_label(
    webhook_client: Any, linked: Any, previous: list[str], current: list[str]
) -> None:
    payload = labels("Issue_Hook__labels_changed", previous, current)
    assert post(webhook_client, gitlab("Issue Hook", payload)).status_code == 204


def test_issue_update_without_label_changes(webhook_client: Any, linked: Any) -> None:
    payload = load("gitlab", "Issue_Hook__labels_changed")
    del payload["changes"]["labels"]
    payload["labels"] = [{"title": "resolver"}]
    assert post(webhook_client, gitlab("Issue Hook", payload)).status_code == 204


def test_signed_delivery_within_the_window(webhook_client: Any, linked: Any) -> None:
    payload = note("@resolver fix")
    assert post(webhook_client, gitlab("Note Hook", payload, signed=True)).status_code == 202
    delivery = gitlab("Note Hook", payload, signed=True, timestamp=time.time() - 290)
    assert post(webhook_client, delivery).status_code == 202


# The header is in whole seconds: truncating a future time takes up to 1 s off it, so 302.
@pytest.mark.parametrize("offset", [-301, 302, -3600])
def test_signed_delivery_outside_the_window_is_401(
    webhook_client: Any, linked: Any, offset: int
) -> None:
    delivery = gitlab(
        "Note Hook", note("@resolver fix"), signed=True, timestamp=time.time() + offset
    )
    assert post(webhook_client, delivery).status_code == 401
    assert linked.jobs() == []


@pytest.mark.parametrize("fault", ["stale", "wrong"])
def test_a_bad_signature_is_refused_even_with_a_matching_token(
    webhook_client: Any, linked: Any, fault: str
) -> None:
    # Both are configured: a present signature is verified, and the token cannot vouch for it.
    when = time.time() - 3600 if fault == "stale" else None
    delivery = gitlab("Note Hook", note("@resolver fix"), signed=True, timestamp=when)
    headers = {**delivery.headers, "X-Gitlab-Token": SECRETS["gitlab"]}
    if fault == "wrong":
        headers["webhook-signature"] = "v1," + "A" * 44
    assert post(webhook_client, replace(delivery, headers=headers)).status_code == 401
    assert linked.jobs() == []


def test_signing_only_refuses_a_bare_token(
    webhook_client: Any, linked: Any, configure: Any
) -> None:
    configure(RESOLVER_GITLAB_WEBHOOK_TOKEN="")
    assert post(webhook_client, gitlab("Note Hook", note("@resolver fix"))).status_code == 401
    assert (
        post(webhook_client, gitlab("Note Hook", note("@resolver fix"), signed=True)).status_code
        == 202
    )


def test_token_only_refuses_a_bare_signature(
    webhook_client: Any, linked: Any, configure: Any
) -> None:
    configure(RESOLVER_GITLAB_SIGNING_TOKEN="")
    assert (
        post(webhook_client, gitlab("Note Hook", note("@resolver fix"), signed=True)).status_code
        == 401
    )
    assert post(webhook_client, gitlab("Note Hook", note("@resolver fix"))).status_code == 202


@pytest.mark.parametrize("token", ["wrong", "gl-test-token ", ""])
def test_wrong_token_is_401(webhook_client: Any, linked: Any, token: str) -> None:
    assert (
        post(webhook_client, gitlab("Note Hook", note("@resolver x"), token=token)).status_code
        == 401
    )


@pytest.mark.parametrize(
    "headers",
    [
        {"webhook-timestamp": "12ab"},
        {"webhook-timestamp": "1" * 5000},
        {"webhook-signature": "v1"},
        {"webhook-signature": "v1,@@@not-base64@@@"},
        {"webhook-signature": "v2,abc v1"},
        {"webhook-id": ""},
    ],
)
def test_odd_standard_webhooks_headers_are_401(
    webhook_client: Any, linked: Any, headers: Any
) -> None:
    delivery = gitlab("Note Hook", note("@resolver x"), signed=True)
    delivery.headers.update(headers)
    assert post(webhook_client, delivery).status_code == 401


def test_idempotency_key_deduplicates(webhook_client: Any, linked: Any) -> None:
    first = post(webhook_client, gitlab("Note Hook", note("@resolver x"), idempotency_key="k-1"))
    again = post(webhook_client, gitlab("Note Hook", note("@resolver x"), idempotency_key="k-1"))
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["job_id"] == first.json()["job_id"]


def test_webhook_id_deduplicates_without_idempotency_key(webhook_client: Any, linked: Any) -> None:
    payload = note("@resolver x")
    sent = []
    for _ in range(2):
        delivery = gitlab("Note Hook", payload, signed=True)
        delivery.headers.pop("Idempotency-Key")
        body = delivery.body
        delivery.headers.update(standard_webhook_headers("msg_same", int(time.time()), body))
        sent.append(post(webhook_client, delivery).status_code)
    assert sent == [202, 200]


@pytest.mark.parametrize("username", ["project_5_bot_3f2a", "group_9_bot", "resolver"])
def test_bot_users_are_ignored(webhook_client: Any, store: Any, username: str) -> None:
    store.link("gitlab", "77", username)
    payload = note("@resolver fix")
    payload["user"].update(id=77, username=username)
    assert post(webhook_client, gitlab("Note Hook", payload)).status_code == 204


def test_unlinked_user_gets_a_notice(webhook_client: Any, store: Any) -> None:
    response = post(webhook_client, gitlab("Note Hook", note("@resolver fix")))
    assert response.json() == {"notice": "unlinked"}
    [notice] = store.notices()
    assert "--provider gitlab --external-id 1 --login root" in notice.body
