"""Forgejo's routes: each trigger, and each case where nothing should happen."""

from __future__ import annotations

import json
from typing import Any

from integrations.forgejo.events import parse_event
from integrations.forgejo.routes import REVIEW_TASK, ROUTES
from integrations.forgejo.trigger import part_of
from resolver.contract.inbound import Policy, RouteResult, Trigger, ignored_sender, route_event
from resolver.contract.triggers import (
    BasePush,
    BasePushed,
    ForgeIssue,
    PullRequest,
    ReviewBatch,
    ReviewRequest,
)
from tests.integrations.forgejo.deliveries import headers_for, load

POLICY = Policy(bot_name="resolver", trigger_label="resolver")
BOT = {"id": 3, "login": "resolver"}


def routed(name: str, payload: dict[str, Any] | None = None) -> RouteResult:
    body = json.dumps(payload if payload is not None else load(name)).encode()
    key = name.split("__", 1)[0]
    return route_event(ROUTES, parse_event(headers_for(key, body), body), POLICY)


def trigger(name: str, payload: dict[str, Any] | None = None) -> Trigger:
    result = routed(name, payload)
    assert isinstance(result, Trigger)
    return result


def test_a_mention_in_an_issue_comment_is_a_request() -> None:
    found = trigger("issue_comment.created__on_issue")
    assert found.task == "please fix this, with a test"
    assert (found.repo, found.conversation_key) == ("forgejo/widgets", "forgejo:forgejo/widgets#7")
    assert found.sender.external_id == "2" and found.sender.login == "alice"
    assert found.once_key == "comment:forgejo/widgets:42"
    subject = found.subject
    assert isinstance(subject, ForgeIssue)
    assert subject.repo.clone_url == "http://localhost:3000/forgejo/widgets.git"
    assert (subject.number, subject.comment_id) == (7, 42)
    assert subject.url is not None and subject.url.endswith("/issues/7#issuecomment-42")
    assert part_of(subject).comment_kind == "issue_comment" and subject.reach == {}


def test_a_comment_without_a_mention_is_nothing() -> None:
    payload = load("issue_comment.created__on_issue")
    payload["comment"]["body"] = "`@resolver` is the bot's name; thanks @resolverish"
    assert routed("issue_comment.created__on_issue", payload) is None


def test_a_mention_on_a_pull_request_carries_its_branches() -> None:
    found = trigger("pull_request_comment.created__on_pull_request")
    assert found.task == "also cover `None`"
    assert found.conversation_key == "forgejo:forgejo/widgets#9"
    subject = found.subject
    assert isinstance(subject, PullRequest)
    assert (subject.head_ref, subject.base_ref) == ("resolver/7-fix-empty-input", "main")


def test_the_trigger_label_on_an_issue_makes_the_issue_the_task_once() -> None:
    found = trigger("issue_label.label_updated__trigger_label")
    assert found.task.startswith("The widget breaks on empty input\n\nSteps:")
    assert isinstance(found.subject, ForgeIssue) and found.subject.label == "resolver"
    # Forgejo does not say which label changed: every later change while the label is on the
    # issue is the same job.
    assert found.once_key == "label:forgejo/widgets#7"


def test_other_labels_are_nothing() -> None:
    payload = load("issue_label.label_updated__trigger_label")
    payload["issue"]["labels"] = [{"id": 1, "name": "bug"}]
    assert routed("issue_label.label_updated__trigger_label", payload) is None


def test_assigning_the_bot_makes_the_issue_the_task_once() -> None:
    found = trigger("issue_assign.assigned__to_bot")
    assert found.task.startswith("Document the widget options")
    assert isinstance(found.subject, ForgeIssue)
    assert (found.subject.assignee, found.once_key) == ("resolver", "assign:forgejo/widgets#8")


def test_assigning_someone_else_is_nothing() -> None:
    payload = load("issue_assign.assigned__to_bot")
    payload["issue"]["assignees"] = [{"id": 2, "login": "alice"}]
    payload["issue"]["assignee"] = {"id": 2, "login": "alice"}
    assert routed("issue_assign.assigned__to_bot", payload) is None


def test_a_commenting_review_of_the_bots_pull_request_is_a_review_batch() -> None:
    found = trigger("pull_request_review_comment.reviewed__on_bot_pull")
    assert found.task == REVIEW_TASK
    subject = found.subject
    assert isinstance(subject, ReviewBatch)
    review_type = part_of(subject).review_type
    assert (subject.number, review_type) == (9, "pull_request_review_comment")


def test_a_review_that_mentions_the_bot_asks_what_it_says() -> None:
    found = trigger("pull_request_review_rejected.reviewed__on_bot_pull")
    assert found.task == "rename `w` to `widget` first"


def test_an_approval_asks_nothing() -> None:
    assert routed("pull_request_review_approved.reviewed__on_bot_pull") is None


def test_a_review_of_someone_elses_pull_request_asks_nothing_unless_it_mentions_the_bot() -> None:
    payload = load("pull_request_review_comment.reviewed__on_bot_pull")
    payload["pull_request"]["user"] = {"id": 2, "login": "alice"}
    payload["sender"] = {"id": 5, "login": "carol"}
    assert routed("pull_request_review_comment.reviewed__on_bot_pull", payload) is None


def test_the_bots_own_review_of_its_pull_request_asks_nothing() -> None:
    payload = load("pull_request_review_comment.reviewed__on_bot_pull")
    payload["sender"] = BOT
    assert routed("pull_request_review_comment.reviewed__on_bot_pull", payload) is None


def test_a_push_to_the_default_branch_is_a_base_push() -> None:
    found = trigger("push__default_branch")
    assert found.bot_branches is True
    assert found.conversation_key == "forgejo:forgejo/widgets@main"
    sha = "bffeb74224043ba2feb48d137756c8a9331c449a"
    assert isinstance(found.subject, BasePushed)
    assert found.subject.push == BasePush(branch="main", sha=sha, config_touched=False)
    assert found.once_key == f"push:forgejo/widgets:refs/heads/main:{sha}"


def test_a_push_to_another_branch_or_a_deletion_is_nothing() -> None:
    assert routed("push__feature_branch") is None
    payload = load("push__default_branch")
    payload["after"] = "0" * 40
    assert routed("push__default_branch", payload) is None


def test_ignored_events_are_nothing() -> None:
    assert routed("issue_comment.edited__on_issue") is None
    assert routed("issue_label.label_cleared__all_labels") is None


def test_a_pull_request_opened_or_given_new_commits_is_an_auto_review_of_its_head() -> None:
    for key in ("pull_request.opened__plain", "pull_request_sync.synchronized__new_commits"):
        found = trigger(key)
        assert found.auto_review and found.task == "Review this pull request."
        subject = found.subject
        assert isinstance(subject, ReviewRequest) and subject.auto and not subject.draft
        assert (subject.number, subject.head_ref) == (10, "speed")
        assert found.once_key == f"auto-review:forgejo:forgejo/widgets#10@{subject.head_sha}"
    wip = load("pull_request.opened__plain")
    wip["pull_request"]["title"] = "WIP: Speed up the widget"
    subject = trigger("pull_request.opened__plain", wip).subject
    assert isinstance(subject, ReviewRequest) and subject.draft
    own = load("pull_request.opened__plain")
    own["pull_request"]["head"]["ref"] = "resolver/speed-up"
    assert routed("pull_request.opened__plain", own) is None


def test_the_bot_itself_and_the_system_accounts_are_ignored_senders() -> None:
    own = load("issue_comment.created__on_issue")
    own["sender"] = BOT
    assert ignored_sender(trigger("issue_comment.created__on_issue", own).sender, POLICY) == "own"
    actions = load("issue_comment.created__on_issue")
    actions["sender"] = {"id": -2, "login": "forgejo-actions"}
    sender = trigger("issue_comment.created__on_issue", actions).sender
    assert ignored_sender(sender, POLICY) == "bot"
    people = trigger("issue_comment.created__on_issue").sender
    assert ignored_sender(people, POLICY) is None
