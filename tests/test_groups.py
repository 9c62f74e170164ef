"""The order an xdist run hands out its work in (tests/support/groups.py): longest first."""

from __future__ import annotations

from tests.support.groups import DURATIONS, _durations, work_order


def test_the_longest_unit_goes_first_and_a_group_stays_whole_in_order() -> None:
    tests = [
        ("a.py::quick", "a.py::quick"),
        ("egress.py::one", "egress.py"),
        ("b.py::slow", "b.py::slow"),
        ("egress.py::two", "egress.py"),
        ("c.py::unknown", "c.py::unknown"),
        ("d.py::unknown", "d.py::unknown"),
    ]
    seconds = {
        "a.py::quick": 1.0,
        "b.py::slow": 30.0,
        "egress.py::one": 20.0,
        "egress.py::two": 15.0,
    }
    order = [tests[i][0] for i in work_order(tests, seconds)]
    # egress.py's two tests are one unit of 35 s, before b.py's 30 s; tests not listed keep
    # their order, last.
    assert order == [
        "egress.py::one",
        "egress.py::two",
        "b.py::slow",
        "a.py::quick",
        "c.py::unknown",
        "d.py::unknown",
    ]


def test_the_durations_file_reads_as_seconds_per_test() -> None:
    seconds = _durations()
    assert seconds and all(figure > 0 for figure in seconds.values())
    assert all("::" in nodeid and nodeid.startswith("tests/") for nodeid in seconds)
    assert DURATIONS.read_text().startswith("#")
