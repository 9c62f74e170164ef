"""A callback row's result is typed and versioned: what a try marked before it posted, and what
the provider answered. A row of the older shape (no `v`) still reads, whatever else it held;
one that does not read names the field at fault, never its value."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from resolver.contract.callbacks import (
    CallbackResult,
    CallbackResultError,
    dump_callback_result,
    read_callback_result,
)


def test_a_result_is_stored_with_its_version_and_only_what_was_set() -> None:
    sent = CallbackResult(url="https://forge.test/o/r/pull/4", number=4)
    stored = dump_callback_result(sent)
    assert stored == {"v": 1, "url": "https://forge.test/o/r/pull/4", "number": 4}
    assert read_callback_result(stored) == sent
    assert dump_callback_result(CallbackResult()) == {"v": 1}


@pytest.mark.parametrize(
    ("old", "read"),
    [
        ({}, CallbackResult()),
        (None, CallbackResult()),
        (
            {"posting": "2026-11-01T10:00:00+00:00"},
            CallbackResult(posting=datetime(2026, 11, 1, 10, tzinfo=UTC)),
        ),
        (
            {"message": {"id": "M1"}, "resolved": True},
            CallbackResult(message={"id": "M1"}, resolved=True),
        ),
        ({"skipped": True}, CallbackResult(skipped=True)),
        ({"review": {"id": 9}}, CallbackResult(review={"id": 9})),
        # An older release's provider code answered in its own words: they stay on the row.
        ({"comment_id": 7, "version": "3"}, CallbackResult()),
    ],
)
def test_a_result_of_the_older_shape_still_reads(old: object, read: CallbackResult) -> None:
    assert read_callback_result(old) == read


@pytest.mark.parametrize(
    ("stored", "says"),
    [
        ({"v": 1, "posting": "s3cr3t"}, "posting: Input should be a valid datetime"),
        ({"posting": ["s3cr3t"]}, "posting: Input should be a valid datetime"),
        ({"v": 1, "number": "s3cr3t"}, "number: Input should be a valid integer"),
        ({"v": 1, "extra": "s3cr3t"}, "extra: Extra inputs are not permitted"),
        ({"v": 2}, "v: Input should be 1"),
        ("s3cr3t", "a callback's result is not an object"),
    ],
)
def test_a_result_that_does_not_read_names_the_field_and_not_its_value(
    stored: object, says: str
) -> None:
    with pytest.raises(CallbackResultError) as raised:
        read_callback_result(stored)
    assert says in str(raised.value) and "s3cr3t" not in str(raised.value)
    error = raised.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
