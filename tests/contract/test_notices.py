"""A notice's context is typed: its trigger, the request an unlinked sender made and the part
only its recipient sees. It is stored flat, as it always was, so every row written before the
types still reads; one that does not read names the field at fault, never its value."""

from __future__ import annotations

import pytest

from resolver.contract.notices import (
    NoticeContext,
    NoticeContextError,
    NoticeRequest,
    PrivatePart,
    dump_notice_context,
    read_notice_context,
)
from resolver.contract.triggers import ChatThread, Origin

TRIGGER = {"kind": "chat_thread", "v": 1, "part": {"channel": "C1", "thread": "1.2"}}
LINK = "https://resolver.test/link/s3cr3t"


def test_a_context_reads_back_as_it_was_written() -> None:
    context = NoticeContext(
        trigger=ChatThread(part={"channel": "C1"}, origin=Origin(provider="slack")),
        request=NoticeRequest(task="fix the flaky test", repo="octo/widgets"),
        private=PrivatePart(to="U1", text=LINK, fallback="Link here"),
    )
    stored = dump_notice_context(context)
    assert stored["kind"] == "chat_thread" and stored["v"] == 1
    assert stored["request"] == {"task": "fix the flaky test", "repo": "octo/widgets"}
    assert read_notice_context(stored) == context


def test_a_row_written_before_the_types_still_reads() -> None:
    """Flat, as intake wrote it before migration 0016: no kind, the provider's keys on top."""
    old = {
        "channel": "C0DEV",
        "thread": "1700000000.0001",
        "request": {"task": "fix it", "repo": None},
        "private": {"to": "U1", "text": LINK},
    }
    context = read_notice_context(old)
    assert isinstance(context.trigger, ChatThread)
    assert context.trigger.part["channel"] == "C0DEV"
    assert context.request == NoticeRequest(task="fix it")
    assert context.private == PrivatePart(to="U1", text=LINK)


def test_a_request_without_a_task_is_no_request() -> None:
    assert read_notice_context({**TRIGGER, "request": {"task": ""}}).request is None
    assert read_notice_context(TRIGGER) == NoticeContext(trigger=ChatThread.model_validate(TRIGGER))


@pytest.mark.parametrize(
    ("stored", "says"),
    [
        ({**TRIGGER, "private": {"to": "U1"}}, "private.text: Field required"),
        ({**TRIGGER, "private": {"to": "U1", "text": ["s3cr3t"]}}, "private.text: Input should"),
        ({**TRIGGER, "private": LINK}, "private: Input should be a valid dictionary"),
        ({**TRIGGER, "request": {"task": "x", "repo": {"s3cr3t": 1}}}, "request.repo: Input"),
        ({**TRIGGER, "kind": "nothing"}, "a stored trigger fits no kind"),
        ([LINK], "a notice's context is not an object"),
    ],
)
def test_a_context_that_does_not_read_names_the_field_and_not_its_value(
    stored: object, says: str
) -> None:
    with pytest.raises(NoticeContextError) as raised:
        read_notice_context(stored)
    assert says in str(raised.value)
    assert "s3cr3t" not in str(raised.value)
    error = raised.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
