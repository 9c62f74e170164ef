"""Bitbucket's routes: each trigger, and each case where nothing should happen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from integrations.bitbucket.events import parse_event
from integrations.bitbucket.routes import IGNORED, REVIEW_TASK, ROUTES, build_number_of
from integrations.bitbucket.trigger import UNKNOWN_PULL, part_of, reach_of
from resolver.contract.inbound import (
    MalformedError,
    Policy,
    RouteResult,
    Trigger,
    ignored_sender,
    route_event,
)
from resolver.contract.triggers import (
    BasePush,
    BasePushed,
    CiFailure,
    PullRequest,
    ReviewBatch,
    ReviewRequest,
)
from tests.integrations.bitbucket.deliveries import headers_for, load

POLICY = Policy(bot_name="resolver", trigger_label="resolver")
ALICE = "{0c1a7f6e-1f0b-4c2e-9a55-3f1b7c9d2a11}"
REPO = "acme/widgets"


def routed(name: str, payload: dict[str, Any] | None = None) -> RouteResult:
    body = json.dumps(payload if payload is not None else load(name)).encode()
    key = name.split("__", 1)[0]
    key = {
        "pullrequest_comment_created": "pullrequest:comment_created",
        "pullrequest_created": "pullrequest:created",
        "pullrequest_updated": "pullrequest:updated",
        "pullrequest_changes_request_created": "pullrequest:changes_request_created",
        "repo_push": "repo:push",
        "pr_comment_added": "pr:comment:added",
        "repo_refs_changed": "repo:refs_changed",
    }[key]
    return route_event(ROUTES, parse_event(headers_for(key, body), body), POLICY)


def trigger(name: str, payload: dict[str, Any] | None = None) -> Trigger:
    result = routed(name, payload)
    assert isinstance(result, Trigger)
    return result


def test_a_mention_in_a_pull_request_comment_is_a_request() -> None:
    found = trigger("pullrequest_comment_created__on_pull")
    assert found.task == "please fix this, with a test"
    assert (found.repo, found.conversation_key) == (REPO, f"bitbucket:{REPO}#3")
    assert (found.sender.external_id, found.sender.login) == (ALICE, "alice")
    assert found.once_key == f"comment:{REPO}:420"
    subject = found.subject
    assert isinstance(subject, PullRequest)
    assert (subject.number, subject.comment_id) == (3, 420)
    assert (subject.head_ref, subject.base_ref) == ("feature/empty-input", "main")
    assert subject.url is not None and subject.url.endswith("/pull-requests/3/_/diff#comment-420")
    assert reach_of(subject).product == "cloud" and part_of(subject).inline_path is None


def test_a_comment_without_a_mention_is_nothing() -> None:
    payload = load("pullrequest_comment_created__on_pull")
    payload["comment"]["content"]["raw"] = "`@resolver` is the bot's name; thanks @resolverish"
    assert routed("pullrequest_comment_created__on_pull", payload) is None


def test_a_mention_on_a_line_of_the_bots_pull_request_keeps_its_place() -> None:
    found = trigger("pullrequest_comment_created__inline_on_bot_pull")
    assert found.task == "also cover `None`"
    assert found.conversation_key == f"bitbucket:{REPO}#4"
    part = part_of(found.subject)
    assert (part.inline_path, part.parent_id) == ("widgets/core.py", 430)
    assert isinstance(found.subject, PullRequest)
    assert found.subject.head_ref == "resolver/3-handle-empty-input"


def test_a_new_pull_request_that_mentions_the_bot_is_a_request() -> None:
    found = trigger("pullrequest_created__mentions_bot")
    assert found.task == "write the missing docstrings for `Widget`"
    assert isinstance(found.subject, PullRequest) and found.subject.number == 5
    assert found.once_key == f"pull:{REPO}#5"


def test_a_new_pull_request_without_a_mention_is_no_work_but_an_auto_review() -> None:
    payload = load("pullrequest_created__mentions_bot")
    payload["pullrequest"]["description"] = "Plain change."
    found = trigger("pullrequest_created__mentions_bot", payload)
    assert found.auto_review and isinstance(found.subject, ReviewRequest)


def test_changes_requested_on_the_bots_pull_request_is_a_review_batch() -> None:
    found = trigger("pullrequest_changes_request_created__on_bot_pull")
    assert found.task == REVIEW_TASK
    assert isinstance(found.subject, ReviewBatch) and found.subject.number == 4


def test_changes_requested_on_someone_elses_pull_request_or_by_the_bot_are_nothing() -> None:
    name = "pullrequest_changes_request_created__on_bot_pull"
    payload = load(name)
    payload["pullrequest"]["author"] = payload["actor"]
    assert routed(name, payload) is None
    own = load(name)
    own["actor"] = own["pullrequest"]["author"]
    assert routed(name, own) is None


def test_a_push_to_a_branch_is_a_base_push() -> None:
    found = trigger("repo_push__main")
    sha = "bffeb74224043ba2feb48d137756c8a9331c449a"
    assert found.bot_branches is True
    assert found.conversation_key == f"bitbucket:{REPO}@main"
    assert isinstance(found.subject, BasePushed)
    assert found.subject.push == BasePush(branch="main", sha=sha)
    assert found.once_key == f"push:{REPO}:refs/heads/main:{sha}"


def test_a_push_to_a_bot_branch_a_tag_a_deletion_or_off_the_named_main_branch_is_nothing() -> None:
    assert routed("repo_push__bot_branch_and_tag") is None
    deleted = load("repo_push__main")
    deleted["push"]["changes"][0].update(new=None, closed=True)
    assert routed("repo_push__main", deleted) is None
    named = load("repo_push__main")
    named["repository"]["mainbranch"] = {"type": "branch", "name": "develop"}
    assert routed("repo_push__main", named) is None


def test_a_data_center_mention_or_push_is_refused_not_routed_into_a_job() -> None:
    assert routed("pr_comment_added__on_pull") is None
    assert routed("repo_refs_changed__main") is None


def test_a_malformed_data_center_payload_is_still_malformed() -> None:
    broken = load("pr_comment_added__on_pull")
    del broken["pullRequest"]
    with pytest.raises(MalformedError):
        routed("pr_comment_added__on_pull", broken)


def test_ignored_events_are_nothing() -> None:
    body = json.dumps(load("pullrequest_updated__plain")).encode()
    for key in ("pullrequest:approved", "pullrequest:fulfilled", "pullrequest:rejected"):
        assert key in IGNORED
        assert route_event(ROUTES, parse_event(headers_for(key, body), body), POLICY) is None


def test_the_bot_itself_and_app_users_are_ignored_senders() -> None:
    own = load("pullrequest_comment_created__on_pull")
    own["actor"] = own["pullrequest"]["author"] | {"nickname": "resolver", "uuid": "{b0}"}
    assert (
        ignored_sender(trigger("pullrequest_comment_created__on_pull", own).sender, POLICY) == "own"
    )
    app = load("pullrequest_comment_created__on_pull")
    app["actor"] = {"type": "app_user", "uuid": "{a99}", "display_name": "CI"}
    assert (
        ignored_sender(trigger("pullrequest_comment_created__on_pull", app).sender, POLICY) == "bot"
    )
    people = trigger("pullrequest_comment_created__on_pull").sender
    assert ignored_sender(people, POLICY) is None


def test_a_failed_build_on_a_bot_branch_is_a_ci_failure_on_its_pull_request() -> None:
    found = routed_status("repo_commit_status_updated__failed_on_bot_branch")
    assert isinstance(found, Trigger)
    branch, sha = "resolver/3-handle-empty-input", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
    assert found.ci_branch == branch and found.conversation_key == f"bitbucket:{REPO}@{branch}"
    subject = found.subject
    assert isinstance(subject, CiFailure) and subject.number == UNKNOWN_PULL
    assert (subject.check.name, subject.check.head_sha, subject.check.branch) == (
        "Pipeline #42 for resolver/3-handle-empty-input",
        sha,
        branch,
    )
    assert subject.check.summary == "Tests failed" and "failed" in found.task
    assert subject.check.pipeline_id == 42  # the run whose log the fix reads


def test_a_status_from_another_ci_names_no_pipeline() -> None:
    name = "repo_commit_status_updated__failed_on_bot_branch"
    other = load(name)
    other["commit_status"].update(name="Jenkins build", url="https://ci.example/job/widgets/7/")
    found = routed_status(name, other)
    assert isinstance(found, Trigger) and isinstance(found.subject, CiFailure)
    assert found.subject.check.pipeline_id is None


def test_a_passing_build_or_one_on_another_branch_is_nothing() -> None:
    name = "repo_commit_status_updated__failed_on_bot_branch"
    passed = load(name)
    passed["commit_status"]["state"] = "SUCCESSFUL"
    assert routed_status(name, passed) is None
    elsewhere = load(name)
    elsewhere["commit_status"]["refname"] = "feature/x"
    assert routed_status(name, elsewhere) is None
    unnamed = load(name)
    del unnamed["commit_status"]["refname"]
    assert routed_status(name, unnamed) is None


def routed_status(name: str, payload: dict[str, Any] | None = None) -> RouteResult:
    body = json.dumps(payload if payload is not None else load(name)).encode()
    key = "repo:commit_status_updated"
    return route_event(ROUTES, parse_event(headers_for(key, body), body), POLICY)


# The bot's account as the operator lists it in RESOLVER_BOT_ACCOUNT_IDS: its account id and
# its uuid.
BOT_ACCOUNT = "557058:7f3e9b1c-bbbb"
BOT_UUID = "{5d2c8e4a-6b1f-4a3e-8c7d-2e9f0a1b3c4d}"
BY_ACCOUNT = Policy(
    bot_name="resolver",
    trigger_label="resolver",
    bot_account_ids=frozenset({BOT_ACCOUNT, BOT_UUID}),
)


def by_account(text: str | None = None, policy: Policy = BY_ACCOUNT) -> RouteResult:
    name = "pullrequest_comment_created__mentions_bot_by_account_id"
    payload = load(name)
    if text is not None:
        payload["comment"]["content"]["raw"] = text
    body = json.dumps(payload).encode()
    event = parse_event(headers_for("pullrequest:comment_created", body), body)
    return route_event(ROUTES, event, policy)


def test_a_mention_the_editor_completed_names_the_bots_account_id_and_is_a_request() -> None:
    found = by_account()
    assert isinstance(found, Trigger) and found.task == "please fix this, with a test"
    assert found.once_key == f"comment:{REPO}:421"


@pytest.mark.parametrize(
    "text",
    [
        "@{5d2c8e4a-6b1f-4a3e-8c7d-2e9f0a1b3c4d} please fix this, with a test",
        "@{557058:7F3E9B1C-BBBB}: please fix this, with a test",
    ],
    ids=["uuid", "any_case"],
)
def test_a_mention_by_the_bots_uuid_is_a_request(text: str) -> None:
    found = by_account(text)
    assert isinstance(found, Trigger) and found.task == "please fix this, with a test"


@pytest.mark.parametrize(
    "text",
    [
        "@{557058:0c1a7f6e-aaaa} please look",  # alice's account, not the bot's
        "@{557058:7f3e9b1c-bbbb-more} please look",
        "`@{557058:7f3e9b1c-bbbb}` is the bot's account",
        "> @{557058:7f3e9b1c-bbbb} fix it\n\nquoted",
        "mail@{557058:7f3e9b1c-bbbb} is not a mention",
    ],
    ids=["someone_else", "longer_id", "code", "quote", "inside_a_word"],
)
def test_another_account_or_the_account_in_code_or_a_quote_is_nothing(text: str) -> None:
    assert by_account(text) is None


def test_without_the_bots_account_ids_only_its_name_counts() -> None:
    assert by_account(policy=POLICY) is None
    assert isinstance(by_account("@resolver please", policy=POLICY), Trigger)


@pytest.mark.parametrize(
    ("url", "name", "number"),
    [
        ("https://bitbucket.example/o/r/pipelines/results/42", None, 42),
        (None, "Pipeline #7 for main", 7),
        ("https://bitbucket.example/o/r/pipelines/results/" + "1" * 5000, None, None),
        (None, "#" + "1" * 5000, None),
    ],
)
def test_a_status_names_its_build_by_a_number_that_fits(
    url: str | None, name: str | None, number: int | None
) -> None:
    assert build_number_of(url, name) == number
