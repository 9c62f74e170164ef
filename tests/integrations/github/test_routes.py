"""GitHub: each trigger, each ignored case, signatures, duplicates and unknown senders."""

from __future__ import annotations

from typing import Any

import pytest

from integrations.github.verify import verify_signature
from resolver.broker.outbox import waiting_job_messages
from resolver.contract.inbound import SignatureError
from resolver.contract.triggers import (
    ForgeIssue,
    PullRequest,
    ReviewBatch,
    comment_of,
    read_trigger,
    repo_of,
)
from tests.integrations.conftest import TEST_REDIS
from tests.integrations.deliveries import github, load, post

CODERTOCAT = "21031067"


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("github", CODERTOCAT, "Codertocat")
    return store


def comment(text: str, fixture: str = "issue_comment.created__on_issue") -> dict[str, Any]:
    payload = load("github", fixture)
    payload["comment"]["body"] = text
    return payload


def test_known_answer_vector() -> None:
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    headers = {"x-hub-signature-256": header}
    verify_signature(headers, b"Hello, World!", "It's a Secret to Everybody")
    with pytest.raises(SignatureError):
        verify_signature(headers, b"Hello, World?", "It's a Secret to Everybody")


def test_issue_comment_mention_creates_a_published_job(client: Any, linked: Any) -> None:
    response = post(client, github("issue_comment.created", comment("@resolver fix the typo")))

    assert response.status_code == 202
    [job] = linked.jobs()
    assert response.json() == {"job_id": job.id}
    assert (job.source, job.repo, job.task, job.state) == (
        "github",
        "Codertocat/Hello-World",
        "fix the typo",
        "queued",
    )
    assert job.requester == "Codertocat" and job.requester_id is not None
    assert job.conversation_key == "github:Codertocat/Hello-World#1"
    trigger = read_trigger(job.trigger)
    assert trigger.origin.event == "issue_comment.created"
    assert isinstance(trigger, ForgeIssue)
    assert trigger.repo.clone_url == "https://github.com/Codertocat/Hello-World.git"
    assert trigger.reach["installation_id"] == 1 and trigger.number == 1
    assert trigger.comment_id == load("github", "issue_comment.created__on_issue")["comment"]["id"]
    assert trigger.origin.is_followup is False
    # Its one message waits under the job's message id (the callbacks side sends its 👀 first).
    assert waiting_job_messages(TEST_REDIS) == {job.message_id}
    [delivery] = linked.deliveries()
    assert (delivery.job_id, delivery.outcome) == (job.id, "job")


def test_comment_on_a_pull_request(client: Any, linked: Any) -> None:
    payload = comment("Hey @Resolver, rebase this", "issue_comment.created__on_pull_request")
    assert post(client, github("issue_comment.created", payload)).status_code == 202
    [job] = linked.jobs()
    assert job.task == "rebase this" and isinstance(read_trigger(job.trigger), PullRequest)


def test_review_comment_on_a_diff_line(client: Any, linked: Any) -> None:
    payload = load("github", "pull_request_review_comment.created__on_diff")
    payload["comment"]["body"] = "@resolver use a constant here"
    assert post(client, github("pull_request_review_comment.created", payload)).status_code == 202
    [job] = linked.jobs()
    assert job.task == "use a constant here"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, ReviewBatch) and trigger.head_ref == "changes"
    assert trigger.part["path"] == "README.md" and trigger.part["comment_kind"] == "review_comment"


@pytest.mark.parametrize(
    ("body", "status"), [("@resolver address this review", 202), ("LGTM", 204)]
)
def test_review_submitted_needs_the_mention_in_its_body(
    client: Any, linked: Any, body: str, status: int
) -> None:
    payload = load("github", "pull_request_review.submitted__approved")
    payload["review"]["body"] = body
    assert post(client, github("pull_request_review.submitted", payload)).status_code == status
    assert len(linked.jobs()) == (1 if status == 202 else 0)


def test_trigger_label_makes_the_issue_the_task(client: Any, linked: Any) -> None:
    payload = load("github", "issues.labeled__bug")
    payload["label"]["name"] = "Resolver"
    assert post(client, github("issues.labeled", payload)).status_code == 202
    [job] = linked.jobs()
    issue = payload["issue"]
    assert job.task == f"{issue['title']}\n\n{issue['body']}".strip()
    assert read_trigger(job.trigger).label == "Resolver"


def test_other_labels_do_nothing(client: Any, linked: Any) -> None:
    assert (
        post(client, github("issues.labeled", load("github", "issues.labeled__bug"))).status_code
        == 204
    )
    assert linked.jobs() == []


def test_assignment_to_the_bot_triggers(client: Any, linked: Any) -> None:
    payload = load("github", "issues.assigned__to_user")
    payload["assignee"]["login"] = "resolver[bot]"
    assert post(client, github("issues.assigned", payload)).status_code == 202
    trigger = read_trigger(linked.jobs()[0].trigger)
    assert isinstance(trigger, ForgeIssue) and trigger.assignee == "resolver[bot]"


def test_assignment_to_someone_else_does_nothing(client: Any, linked: Any) -> None:
    payload = load("github", "issues.assigned__to_user")
    assert post(client, github("issues.assigned", payload)).status_code == 204
    assert linked.jobs() == []


@pytest.mark.parametrize(
    ("key", "fixture"),
    [
        ("issue_comment.edited", "issue_comment.edited__on_issue"),
        ("issue_comment.deleted", "issue_comment.deleted__on_issue"),
        ("pull_request_review_comment.edited", "pull_request_review_comment.edited__on_diff"),
    ],
)
def test_edits_and_deletions_are_ignored(client: Any, linked: Any, key: str, fixture: str) -> None:
    payload = load("github", fixture)
    payload["comment"]["body"] = "@resolver do it"
    assert post(client, github(key, payload)).status_code == 204
    assert linked.jobs() == [] and linked.deliveries() == []


def test_ping_answers_204(client: Any, linked: Any) -> None:
    assert post(client, github("ping", load("github", "ping__repository_hook"))).status_code == 204


@pytest.mark.parametrize(
    "text",
    [
        "`@resolver` is our bot",
        "```\n@resolver fix\n```",
        "> @resolver fix it\n\nthat was a quote",
        "mail me at me@resolver.dev",
        "@resolverbot please",
        "@resolver-helper please",
    ],
)
def test_no_whole_word_mention_in_prose_does_nothing(client: Any, linked: Any, text: str) -> None:
    assert post(client, github("issue_comment.created", comment(text))).status_code == 204
    assert linked.jobs() == []


@pytest.mark.parametrize(("login", "kind"), [("resolver[bot]", "Bot"), ("resolver", "User")])
def test_the_bots_own_comments_are_ignored(client: Any, store: Any, login: str, kind: str) -> None:
    store.link("github", "999", login)
    payload = comment("@resolver I am on it")
    payload["sender"].update(login=login, id=999, type=kind)
    assert post(client, github("issue_comment.created", payload)).status_code == 204
    assert store.jobs() == []


def test_other_bots_are_ignored_unless_allow_listed(
    client: Any, store: Any, configure: Any
) -> None:
    store.link("github", "49699333", "dependabot[bot]")
    payload = comment("@resolver rebase")
    payload["sender"].update(login="dependabot[bot]", id=49699333, type="Bot")
    assert post(client, github("issue_comment.created", payload)).status_code == 204
    configure(RESOLVER_ALLOWED_BOTS="dependabot[bot]")
    assert post(client, github("issue_comment.created", payload)).status_code == 202


def test_a_second_mention_in_the_same_issue_is_a_followup(client: Any, linked: Any) -> None:
    first = post(client, github("issue_comment.created", comment("@resolver fix it")))
    post(client, github("issue_comment.created", comment("@resolver also add a test")))
    second = linked.jobs()[1]
    origin = read_trigger(second.trigger).origin
    assert origin.is_followup is True and origin.previous_job_id == first.json()["job_id"]


def test_a_redelivery_answers_200_with_the_first_job(client: Any, linked: Any) -> None:
    delivery = github("issue_comment.created", comment("@resolver fix it"), delivery="d-1")
    first = post(client, delivery)
    again = post(client, delivery)
    assert first.status_code == 202
    assert again.status_code == 200
    assert again.json() == {"job_id": first.json()["job_id"], "duplicate": True}
    assert len(linked.jobs()) == 1


def test_one_guid_on_two_hooks_is_two_deliveries(client: Any, linked: Any) -> None:
    payload = comment("@resolver fix it")
    assert (
        post(
            client, github("issue_comment.created", payload, delivery="g", hook_id="1")
        ).status_code
        == 202
    )
    assert (
        post(
            client, github("issue_comment.created", payload, delivery="g", hook_id="2")
        ).status_code
        == 202
    )


def test_unlinked_sender_gets_one_notice_and_no_job(client: Any, store: Any) -> None:
    response = post(client, github("issue_comment.created", comment("@resolver fix it")))
    assert response.status_code == 200 and response.json() == {"notice": "unlinked"}
    post(client, github("issue_comment.created", comment("@resolver please?")))
    assert store.jobs() == []
    [notice] = store.notices()
    assert notice.kind == "unlinked" and notice.sent_at is None
    assert notice.conversation_key == "github:Codertocat/Hello-World#1"
    assert "resolver users link" in notice.body and "--external-id 21031067" in notice.body
    asked = read_trigger(notice.context)
    assert comment_of(asked) and repo_of(asked) == "Codertocat/Hello-World"


@pytest.mark.parametrize(
    "mangle",
    [
        lambda h: h.pop("X-Hub-Signature-256"),
        lambda h: h.update({"X-Hub-Signature-256": h["X-Hub-Signature-256"].upper()}),
        lambda h: h.update({"X-Hub-Signature-256": h["X-Hub-Signature-256"][7:]}),
        lambda h: h.update({"X-Hub-Signature-256": "sha256=" + "0" * 64}),
        lambda h: h.update({"X-Hub-Signature-256": "sha256=é".encode("latin-1")}),
    ],
)
def test_bad_signatures_are_401(client: Any, linked: Any, mangle: Any) -> None:
    delivery = github("issue_comment.created", comment("@resolver fix it"))
    mangle(delivery.headers)
    assert post(client, delivery).status_code == 401
    assert linked.jobs() == []


def test_sha1_signature_alone_is_refused(client: Any, linked: Any) -> None:
    import hashlib
    import hmac

    delivery = github("issue_comment.created", comment("@resolver fix it"))
    sha1 = hmac.new(b"gh-test-secret", delivery.body, hashlib.sha1).hexdigest()
    delivery.headers.pop("X-Hub-Signature-256")
    delivery.headers["X-Hub-Signature"] = f"sha1={sha1}"
    assert post(client, delivery).status_code == 401


def test_signature_over_another_body_is_401(client: Any, linked: Any) -> None:
    delivery = github("issue_comment.created", comment("@resolver fix it"))
    tampered = delivery.body.replace(b"fix it", b"rm -rf")
    assert client.post(delivery.path, content=tampered, headers=delivery.headers).status_code == 401


def test_signed_garbage_is_400(client: Any, linked: Any) -> None:
    assert post(client, github("issue_comment.created", b"not json")).status_code == 400
    assert (
        post(client, github("issue_comment.created", b'{"action": "created"}')).status_code == 400
    )
    delivery = github("issue_comment.created", comment("@resolver x"))
    delivery.headers.pop("X-GitHub-Delivery")
    assert post(client, delivery).status_code == 400


def test_the_write_step_sees_only_verified_routed_triggers(webhook_env: dict[str, str]) -> None:
    """`endpoint(record=…)` (what bench/ingress measures without its write) hands the writer
    the routed trigger, and never anything that failed verification."""
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from integrations.github import INTEGRATION as integration
    from resolver.core.settings import get_settings
    from resolver.ingress.endpoint import endpoint
    from resolver.ingress.intake import Accepted, Pending

    recorded: list[Pending] = []

    async def record(pending: Pending) -> Accepted:
        recorded.append(pending)
        return Accepted("created", job_id=7)

    routed = endpoint(integration, get_settings, record=record)
    app = Starlette(routes=[Route("/webhooks/github", routed, methods=["POST"])])
    delivery = github("issue_comment.created", comment("@resolver fix the typo"))
    with TestClient(app) as client:
        forged = {**delivery.headers, "X-Hub-Signature-256": "sha256=" + "0" * 64}
        assert client.post(delivery.path, content=delivery.body, headers=forged).status_code == 401
        assert recorded == []
        response = post(client, delivery)

    assert (response.status_code, response.json()) == (202, {"job_id": 7})
    [pending] = recorded
    assert (pending.provider, pending.trigger.task) == ("github", "fix the typo")
