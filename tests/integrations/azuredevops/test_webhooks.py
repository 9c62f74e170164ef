"""Azure DevOps's webhook side: basic auth and the secret header (both, in constant time),
parsing (the notification id is the delivery key), and every behaviour of the routes,
including where nothing should happen."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from integrations.azuredevops.events import parse_event
from integrations.azuredevops.routes import ROUTES, plain_text, repo_option
from integrations.azuredevops.trigger import part_of
from integrations.azuredevops.verify import verify_delivery
from resolver.contract.inbound import (
    MalformedError,
    Policy,
    RouteResult,
    SignatureError,
    Trigger,
    ignored_sender,
    route_event,
)
from resolver.contract.triggers import BasePushed, CiFailure, PullRequest, TrackerTicket
from tests.integrations.azuredevops.deliveries import (
    HEADER_SECRET,
    PASSWORD,
    USER,
    headers_for,
    load,
)

POLICY = Policy(bot_name="resolver", trigger_label="resolver")
BOT = {"id": "0b5e1c3a-1f1c-4c55-9d4f-2d3c5a2b0e11", "uniqueName": "resolver@contoso.com"}


def check(headers: dict[str, str]) -> None:
    verify_delivery(headers, USER, PASSWORD, HEADER_SECRET)


def test_the_hooks_credentials_and_header_pass() -> None:
    check(headers_for())


@pytest.mark.parametrize(
    "headers",
    [
        {},
        headers_for(header_secret=None),
        headers_for(password="another password"),
        headers_for(user="mallory"),
        headers_for(header_secret="another secret"),
        {"authorization": "Bearer " + PASSWORD, "x-resolver-secret": HEADER_SECRET},
        {"authorization": "Basic not-base64!", "x-resolver-secret": HEADER_SECRET},
        {"authorization": "Basic cmVzb2x2ZXI=", "x-resolver-secret": HEADER_SECRET},  # no colon
    ],
    ids=["none", "no_header", "password", "user", "header", "bearer", "garbled", "no_colon"],
)
def test_anything_less_than_both_credentials_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(SignatureError):
        check(headers)


def test_the_delivery_key_is_the_subscription_and_notification() -> None:
    body = json.dumps(load("git.push__default_branch")).encode()
    event = parse_event(headers_for(), body)
    assert event.key == "git.push"
    assert event.delivery_key == "00000000-0000-0000-0000-000000000000:15"


@pytest.mark.parametrize("body", [b"[]", b'{"eventType": "git.push"}', b"not json"])
def test_a_body_that_is_no_notification_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedError):
        parse_event(headers_for(), body)


def routed(name: str, payload: dict[str, Any] | None = None) -> RouteResult:
    body = json.dumps(payload if payload is not None else load(name)).encode()
    return route_event(ROUTES, parse_event(headers_for(), body), POLICY)


def trigger(name: str, payload: dict[str, Any] | None = None) -> Trigger:
    result = routed(name, payload)
    assert isinstance(result, Trigger)
    return result


def test_a_mention_in_a_pull_request_thread_is_a_request() -> None:
    found = trigger("ms.vss-code.git-pullrequest-comment-event__in_thread")
    assert found.task == "the test still fails on negative numbers, please fix it"
    assert (found.repo, found.conversation_key) == (
        "Widgets/widgets",
        "azuredevops:Widgets/widgets!1",
    )
    assert found.sender.external_id == "d6245f20-2af8-44f4-9451-8107cb2767db"
    assert found.sender.login == "alice" and not found.sender.is_bot
    subject = found.subject
    assert isinstance(subject, PullRequest)
    assert (subject.number, subject.comment_id, subject.head_ref, subject.base_ref) == (
        1,
        1,
        "fix-add",
        "main",
    )
    assert subject.repo.clone_url == "https://dev.azure.com/contoso/Widgets/_git/widgets"
    assert part_of(subject).thread_id == 5


def test_a_thread_comment_without_a_mention_is_nothing() -> None:
    payload = load("ms.vss-code.git-pullrequest-comment-event__in_thread")
    payload["resource"]["comment"]["content"] = "looks good to me"
    assert routed("ms.vss-code.git-pullrequest-comment-event__in_thread", payload) is None


def test_a_pull_request_opened_with_a_mention_or_the_label_is_a_request() -> None:
    mention = trigger("git.pullrequest.created__mention_in_description")
    assert mention.task == "add a test for negative numbers"
    assert routed("git.pullrequest.created__plain") is None
    labelled = trigger("git.pullrequest.updated__trigger_label")
    assert isinstance(labelled.subject, PullRequest) and labelled.subject.label == "resolver"
    assert labelled.once_key == "label:4bc14d40-c903-45e2-872e-0462c7748079#1"


def test_an_inactive_label_is_not_the_trigger() -> None:
    payload = load("git.pullrequest.updated__trigger_label")
    payload["resource"]["labels"][0]["active"] = False
    assert routed("git.pullrequest.updated__trigger_label", payload) is None


def test_a_push_to_the_default_branch_is_a_base_push_and_others_are_nothing() -> None:
    found = trigger("git.push__default_branch")
    assert isinstance(found.subject, BasePushed) and found.bot_branches
    assert found.subject.push.branch == "main"
    assert found.subject.push.sha == "33b55f7cb7e7e245323987634f960cf4a6e6bc74"
    assert routed("git.push__feature_branch") is None
    deleted = load("git.push__default_branch")
    deleted["resource"]["refUpdates"][0]["newObjectId"] = "0" * 40
    assert routed("git.push__default_branch", deleted) is None


def test_a_mention_on_a_work_item_is_a_ticket_of_its_project() -> None:
    found = trigger("workitem.commented__mention")
    assert found.task == "please fix this" and found.repo is None
    subject = found.subject
    assert isinstance(subject, TrackerTicket) and subject.key == "7"
    assert (part_of(subject).project, part_of(subject).work_item) == ("Widgets", 7)
    assert subject.body == "It returns a - b."
    assert found.conversation_key == "azuredevops:Widgets#7"


def test_a_work_item_mention_may_name_its_repository_inline() -> None:
    payload = load("workitem.commented__mention")
    payload["resource"]["fields"]["System.History"] = "<div>@resolver fix it repo=Widgets/api</div>"
    found = trigger("workitem.commented__mention", payload)
    assert (found.task, found.repo) == ("fix it", "Widgets/api")


def test_a_work_item_comment_whose_author_has_no_id_is_nothing() -> None:
    payload = load("workitem.commented__mention")
    payload["resource"]["fields"]["System.ChangedBy"] = "Alice Lee <alice@contoso.com>"
    assert routed("workitem.commented__mention", payload) is None


def test_a_newly_added_trigger_tag_or_the_bot_assigned_is_a_ticket() -> None:
    tagged = trigger("workitem.updated__tagged")
    assert isinstance(tagged.subject, TrackerTicket) and tagged.subject.label == "resolver"
    assert tagged.task == "add() subtracts instead of adding\n\nIt returns a - b."
    assigned = trigger("workitem.updated__assigned_to_bot")
    assert isinstance(assigned.subject, TrackerTicket)
    assert routed("workitem.updated__state_only") is None


def test_a_tag_that_was_there_before_is_nothing() -> None:
    payload = load("workitem.updated__tagged")
    payload["resource"]["fields"]["System.Tags"]["oldValue"] = "resolver"
    assert routed("workitem.updated__tagged", payload) is None


def test_someone_else_assigned_is_nothing() -> None:
    payload = copy.deepcopy(load("workitem.updated__assigned_to_bot"))
    payload["resource"]["fields"]["System.AssignedTo"]["newValue"] = dict(
        BOT, id="x", uniqueName="carol@contoso.com"
    )
    assert routed("workitem.updated__assigned_to_bot", payload) is None


def test_a_service_principal_is_a_bot() -> None:
    payload = load("ms.vss-code.git-pullrequest-comment-event__in_thread")
    payload["resource"]["comment"]["author"]["descriptor"] = "aadsp.Y2Q3"
    assert trigger("ms.vss-code.git-pullrequest-comment-event__in_thread", payload).sender.is_bot


def test_text_helpers() -> None:
    assert plain_text("<div>@resolver&nbsp;go</div>") == "@resolver\xa0go"
    assert repo_option("fix repo=A/b now") == ("fix now", "A/b")
    assert repo_option("fix it") == ("fix it", None)


def test_a_failed_validation_build_of_the_bots_pull_request_is_a_ci_failure() -> None:
    found = trigger("build.complete__failed_pull_request_build")
    subject = found.subject
    assert isinstance(subject, CiFailure)
    assert (subject.number, subject.repo.full_name) == (3, "Widgets/widgets")
    assert subject.check.check_id == 42 and subject.check.name == "widgets-ci"
    assert found.ci_branch == "resolver/7-add-subtracts-instead-of-adding"
    assert found.conversation_key == "azuredevops:Widgets/widgets!3"


@pytest.mark.parametrize(
    "change",
    [
        {"result": "succeeded"},
        {"triggerInfo": {"pr.number": "3", "pr.sourceBranch": "refs/heads/feature"}},
        {"triggerInfo": {}, "sourceBranch": "refs/heads/resolver/7-x"},  # not a PR build
    ],
    ids=["succeeded", "someone_elses_branch", "no_pull_request"],
)
def test_other_builds_are_nothing(change: dict[str, Any]) -> None:
    payload = load("build.complete__failed_pull_request_build")
    payload["resource"].update(change)
    assert routed("build.complete__failed_pull_request_build", payload) is None


def test_the_bots_own_comment_is_its_own() -> None:
    payload = load("ms.vss-code.git-pullrequest-comment-event__in_thread")
    payload["resource"]["comment"]["author"].update(BOT, displayName="Resolver")
    payload["resource"]["comment"]["content"] = "@resolver is on it"
    found = trigger("ms.vss-code.git-pullrequest-comment-event__in_thread", payload)
    assert ignored_sender(found.sender, POLICY) == "own"
    by_id = Policy(
        bot_name="someone-else", trigger_label="x", bot_account_ids=frozenset({BOT["id"]})
    )
    assert ignored_sender(found.sender, by_id) == "own"
