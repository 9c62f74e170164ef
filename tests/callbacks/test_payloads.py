"""Callback payloads are typed values, one per kind, stored with their `kind` and `v`: a payload
of the older shape (before migration 0018, or from a worker of the previous release) reads as
the same value, a worker of the previous release reads a new one by its old keys, and a payload
that does not read says which field is wrong, never its value."""

from __future__ import annotations

from typing import Any

import pytest

from resolver.callbacks.send import ACTIONS, Action
from resolver.contract.callbacks import (
    PAYLOADS,
    CallbackPayload,
    CallbackPayloadError,
    NoticePost,
    PullToOpen,
    Reaction,
    Reply,
    ReviewContent,
    ReviewToPost,
    StatusUpdate,
    ThreadReply,
    dump_payload,
    kind_of,
    read_payload,
)
from resolver.contract.review import DiffComment

COMMENT = {
    "path": "src/app.py",
    "line": 12,
    "side": "RIGHT",
    "body": "This can be None.",
    "old_line": 11,
    "new_line": 12,
    "old_path": None,
    "suggestion": "if value is None:",
}
# Each payload as the release before these types wrote it, and the value it reads as.
OLD_SHAPES: list[tuple[type[CallbackPayload], dict[str, Any], CallbackPayload]] = [
    # `record_status` wrote the row's own id into it; `send` gives it now.
    (StatusUpdate, {"job_id": 4, "callback_id": 9}, StatusUpdate(job_id=4)),
    (Reaction, {"job_id": 4}, Reaction(job_id=4)),
    (
        Reply,
        {"job_id": 4, "text": "Queued behind job 3."},
        Reply(job_id=4, text="Queued behind job 3."),
    ),
    (NoticePost, {"notice_id": 2}, NoticePost(notice_id=2)),
    (PullToOpen, {"job_id": 4}, PullToOpen(job_id=4)),
    (
        ThreadReply,
        {"job_id": 4, "where": {"discussion_id": "abc"}, "text": "Done.", "resolve": True},
        ThreadReply(job_id=4, where={"discussion_id": "abc"}, text="Done.", resolve=True),
    ),
    (
        ReviewToPost,
        {
            "job_id": 4,
            # `ReviewResult.as_dict`: also where each comment sits in the diff.
            "review": {
                "summary": "Two things.",
                "verdict": "request_changes",
                "comments": [COMMENT],
                "head_sha": "h",
                "base_sha": "b",
                "start_sha": "s",
                "since": None,
                "excerpts": [[[" ", 11, 12, "x = f()"]]],
            },
        },
        ReviewToPost(
            job_id=4,
            review=ReviewContent(
                summary="Two things.",
                verdict="request_changes",
                comments=(DiffComment(**COMMENT),),  # type: ignore[arg-type]
                head_sha="h",
                base_sha="b",
                start_sha="s",
            ),
        ),
    ),
]


@pytest.mark.parametrize(
    ("model", "old", "typed"), OLD_SHAPES, ids=lambda v: getattr(v, "kind", "")
)
def test_an_old_payload_reads_as_its_typed_value_and_back(
    model: type[CallbackPayload], old: dict[str, Any], typed: CallbackPayload
) -> None:
    assert read_payload(model, old) == typed
    stored = dump_payload(typed)
    assert (stored["kind"], stored["v"]) == (kind_of(model), 1)
    assert read_payload(model, stored) == typed
    # A worker of the previous release reads a new row by the keys it knows.
    for key in ("job_id", "notice_id", "text", "where", "resolve"):
        assert stored.get(key) == old.get(key)
    if "review" in old:
        review = stored["review"]
        assert isinstance(review, dict) and review == {k: old["review"][k] for k in review}


def test_every_kind_of_resolvers_own_is_sent_by_the_action_for_its_model() -> None:
    for kind, model in PAYLOADS.items():
        action = ACTIONS[kind]
        assert isinstance(action, Action) and action.payload is model


NOT_READ = "callback's payload does not read"
BAD: list[tuple[type[CallbackPayload], object, str]] = [
    (StatusUpdate, {"text": "done"}, f"a status {NOT_READ}: job_id: Field required"),
    (Reply, {"job_id": 4}, f"a reply {NOT_READ}: text: Field required"),
    (Reply, {"kind": "reply", "v": 1, "job_id": "four", "text": "x"}, "job_id: Input should be a"),
    (Reply, {"kind": "status", "v": 1, "job_id": 4}, "a reply callback holds a status payload"),
    (Reply, {"kind": "reply", "v": 2, "job_id": 4, "text": "x"}, "v: Input should be 1"),
    (Reply, ["job_id", 4], "a reply callback's payload is not an object"),
    (Reply, None, "a reply callback's payload is not an object"),
    (
        ThreadReply,
        {"kind": "thread_reply", "v": 1, "job_id": 4, "text": "x", "extra": 1},
        "extra: Extra inputs are not permitted",
    ),
    (
        ReviewToPost,
        {"job_id": 4, "review": {"summary": "s", "verdict": "approve"}},
        "review.verdict: Input should be",
    ),
]


@pytest.mark.parametrize(("model", "stored", "says"), BAD)
def test_a_payload_that_does_not_read_names_the_field_and_not_its_value(
    model: type[CallbackPayload], stored: object, says: str
) -> None:
    with pytest.raises(CallbackPayloadError) as raised:
        read_payload(model, stored)
    assert says in str(raised.value)
    assert "four" not in str(raised.value) and "approve" not in str(raised.value)
    # pydantic's own message quotes the values: it is not chained.
    error = raised.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_a_payload_is_frozen() -> None:
    reply = Reply(job_id=4, text="hi")
    with pytest.raises(ValueError, match="frozen"):
        reply.text = "changed"  # type: ignore[misc]
