"""A job's result is a typed, versioned value written through one function: an older row
reads as version 1, a change is checked before it is stored, a runner's details ride along."""

from __future__ import annotations

import pytest

from resolver.contract.results import ResultError, merged_result, read_result


def test_an_unversioned_row_reads_as_version_one() -> None:
    result = read_result({"summary": "done", "pull_pending": True, "files": [["M", "a.py"]]})
    assert (result.v, result.summary, result.pull_pending) == (1, "done", True)
    assert read_result(None).summary is None and read_result({}).quiet is False


def test_a_change_is_stored_with_its_version_beside_what_was_there() -> None:
    stored = merged_result({"summary": "done", "schedule": {"action": "open"}}, {"pull_number": 4})
    assert stored == {"v": 1, "summary": "done", "schedule": {"action": "open"}, "pull_number": 4}
    assert read_result(stored).pull_number == 4


def test_a_change_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(ResultError, match="would not read"):
        merged_result({}, {"pull_number": "four"})
    with pytest.raises(ResultError, match="does not read"):
        read_result({"steering": "x"})
