"""What intake decides on, pure: whether a push changed the repository's config, and why a push
or a red check cannot concern the bot."""

from __future__ import annotations

from resolver.contract.pulls import (
    IGNORED_BEING_READ,
    IGNORED_NO_BOT_PULL,
    IGNORED_NOT_OPTED_IN,
    Standing,
    touches_config,
    why_check_ignored,
    why_push_ignored,
)


def standing(**values: object) -> Standing:
    fields: dict[str, object] = {
        "ci_fix": None,
        "conflicts_fix": None,
        "ci_reading": False,
        "conflicts_reading": False,
        "pull_into_base": False,
    }
    return Standing(**{**fields, **values})  # type: ignore[arg-type]


def test_a_push_changed_the_config_only_when_a_listed_commit_touched_it() -> None:
    assert touches_config([("README.md",), ("src/a.py",)], complete=True) is False
    assert touches_config([("README.md",), (".resolver/config.yml",)], complete=True) is True
    assert touches_config([("README.md",)], complete=False) is None  # the list was cut short
    assert touches_config(None, complete=True) is None


def test_why_a_push_cannot_concern_the_bot() -> None:
    assert why_push_ignored(None) is None  # not read yet: one job reads it
    assert why_push_ignored(standing(conflicts_reading=True)) == IGNORED_BEING_READ
    assert why_push_ignored(standing(conflicts_fix=False)) == IGNORED_NOT_OPTED_IN
    assert why_push_ignored(standing(conflicts_fix=True)) == IGNORED_NO_BOT_PULL
    assert why_push_ignored(standing(conflicts_fix=True, pull_into_base=True)) is None


def test_why_a_red_check_cannot_concern_the_bot() -> None:
    assert why_check_ignored(None) is None
    assert why_check_ignored(standing(ci_reading=True)) == IGNORED_BEING_READ
    assert why_check_ignored(standing(ci_fix=False)) == IGNORED_NOT_OPTED_IN
    assert why_check_ignored(standing(ci_fix=True)) is None
