"""A repository's YAML files are hostile data: a file that would expand, nest or grow without
bound, or hold a value of the wrong kind, is refused with a message for its author, never an
error of the host's own (a worker's memory, an 'internal error'). Pure."""

from __future__ import annotations

import pytest

from resolver.agent.task import InvalidLimitError, limits_from
from resolver.core.settings import get_settings
from resolver.core.yamlfile import MAX_BYTES, RepoYamlError, load_yaml
from resolver.schedules.spec import ScheduleError, parse_file

# 500 bytes whose value, printed, is a billion items: aliases of aliases.
ALIASES = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]\n" for n in range(1, 9)
)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (ALIASES + "conflicts: *a8\n", "anchors and aliases"),
        ("a: " + "[" * 500 + "]" * 500, "nested more than"),
        ("x: [" + "1," * (MAX_BYTES // 2) + "1]", "larger than"),
        ("x: [unclosed", "not valid YAML"),
    ],
)
def test_a_file_that_would_expand_nest_or_grow_is_refused(text: str, says: str) -> None:
    with pytest.raises(RepoYamlError, match=says):
        load_yaml(text, ".resolver/config.yml")


def test_plain_data_reads_as_it_is() -> None:
    assert load_yaml("conflicts: fix\nci: {fix: true}\nlist: [a, b]\n", "f") == {
        "conflicts": "fix",
        "ci": {"fix": True},
        "list": ["a", "b"],
    }


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "ten", [1] * 10_000])
def test_a_limit_that_is_no_finite_number_is_the_repositorys_error(value: object) -> None:
    with pytest.raises(InvalidLimitError) as refused:
        limits_from(get_settings(), {"max_iterations": value})
    assert len(str(refused.value)) < 200


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("{name: a, cron: '0 6 * * 1', true: 1, zz: 2}", "unknown keys"),
        (
            "{name: a, cron: '0 6 * * 1', task: update-dependencies, max_iterations: .nan}",
            "positive number",
        ),
        (
            "{name: a, cron: '0 6 * * 1', task: update-dependencies, max_iterations: .inf}",
            "positive number",
        ),
        (
            "{name: a, cron: '0 6 * * 1', task: update-dependencies,"
            " max_iterations: 1099511627776}",
            "at most",
        ),
        ("{name: a, cron: '" + ",".join(map(str, range(60))) + " * * * *'}", "longer than"),
        ("{name: [" + "x, " * 1000 + "x], cron: '0 6 * * 1'}", "name a list"),
    ],
)
def test_a_schedule_of_the_wrong_kind_is_the_files_error(entry: str, says: str) -> None:
    with pytest.raises(ScheduleError, match=says) as refused:
        parse_file(f"schedules:\n  - {entry}\n")
    assert len(str(refused.value)) < 300


def test_a_file_may_not_hold_more_schedules_than_a_beat_tick_should_walk() -> None:
    many = "".join(
        f"  - {{name: s{n}, cron: '0 6 * * 1', task: update-dependencies}}\n" for n in range(51)
    )
    with pytest.raises(ScheduleError, match="at most 50"):
        parse_file("schedules:\n" + many)
    doubled = "  - {name: s, cron: '0 6 * * 1', task: update-dependencies}\n" * 2
    with pytest.raises(ScheduleError, match="s"):
        parse_file("schedules:\n" + doubled)
