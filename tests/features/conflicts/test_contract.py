"""`conflicts: fix` in `.resolver/config.yml`: off unless set, and a clear error otherwise."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from resolver.contract.triggers import (
    BasePush,
    BasePushed,
    Repository,
    base_push_in,
    dump_trigger,
    read_trigger,
)
from resolver.features.conflicts.contract import (
    ConflictsConfig,
    ConflictsConfigError,
    once_key,
    parse_conflicts_config,
)


@pytest.mark.parametrize(
    ("text", "fix"),
    [("", False), ("ci: {fix: true}", False), ("conflicts: fix", True), ("conflicts: off", False)],
)
def test_the_opt_in_is_off_unless_set(text: str, fix: bool) -> None:
    assert parse_conflicts_config(yaml.safe_load(text) or {}) == ConflictsConfig(fix=fix)


@pytest.mark.parametrize("value", [True, "rebase", 1, ["fix"], {"fix": True}])
def test_anything_else_is_a_clear_error(value: Any) -> None:
    with pytest.raises(ConflictsConfigError, match="`conflicts` must be `fix`"):
        parse_conflicts_config({"conflicts": value})


def test_a_push_round_trips_through_the_trigger_context() -> None:
    push = BasePush("main", "a" * 40)
    trigger = BasePushed(repo=Repository(full_name="o/r"), push=push)
    assert base_push_in(read_trigger(dump_trigger(trigger))) == push
    assert base_push_in(read_trigger({})) is None


def test_the_bound_key_fits_its_column() -> None:
    assert once_key(12345, "f" * 40) == f"merge:12345:{'f' * 40}"
    assert len(once_key(10**30, "f" * 64)) == 64
