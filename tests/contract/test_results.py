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


def test_a_runners_details_read_typed() -> None:
    stored = {
        "summary": "Merged main.",
        "files": [["src/app.py", 3, 1], ["README.md", None, None]],
        "schedule": {"action": "open", "inputs": "abc", "diff": "+x", "kept": 1},
        "pulls": {"4": {"state": "failed", "summary": "no", "unresolved": {"base": "main"}}},
    }
    result = read_result(stored)
    assert result.files == (("src/app.py", 3, 1), ("README.md", None, None))
    assert result.schedule is not None and result.schedule.action == "open"
    assert result.pulls["4"].state == "failed" and result.pulls["4"].unresolved == {"base": "main"}
    # What a runner keeps beyond what is read rides along, and the stored shape is unchanged.
    assert merged_result(stored, {}) == {"v": 1, **stored}


def test_an_older_rows_detail_that_does_not_read_reads_as_absent_and_is_kept() -> None:
    """Written before the details were typed: the row still reads, and nothing of it is lost."""
    old = {"summary": "done", "files": [["M", "a.py"]], "steps": "many", "pulls": ["4"]}
    result = read_result(old)
    assert (result.summary, result.files, result.steps, result.pulls) == ("done", (), None, {})
    assert merged_result(old, {"pull_number": 4}) == {**old, "v": 1, "pull_number": 4}


def test_a_writer_is_held_to_the_types_of_the_details_too() -> None:
    with pytest.raises(ResultError, match=r"files\.0\.1: Input should be a valid integer"):
        merged_result({}, {"files": [["a.py", "three", 1]]})
    with pytest.raises(ResultError, match=r"pulls\.4\.state: Field required"):
        merged_result({}, {"pulls": {"4": {"summary": "x"}}})


def test_a_result_that_does_not_read_names_the_field_and_not_its_value() -> None:
    with pytest.raises(ResultError) as raised:
        read_result({"summary": ["s3cr3t"], "steering": "s3cr3t", "files": "s3cr3t"})
    said = str(raised.value)
    assert said.startswith("a job's result does not read: summary: Input should be a valid")
    assert "steering: Input should be a valid integer" in said and "s3cr3t" not in said
    with pytest.raises(ResultError) as wrote:
        merged_result({"summary": "done"}, {"pull_number": "s3cr3t"})
    assert "pull_number" in str(wrote.value) and "s3cr3t" not in str(wrote.value)
    assert wrote.value.__cause__ is None and wrote.value.__suppress_context__
