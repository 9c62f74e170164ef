"""`ImportedOnCall`: a provider's descriptor names its reply side's functions without importing
them, and the first call imports the module and binds the function."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver.contract.provider import ImportedOnCall

MODULE = "reply_side_for_the_test"


@pytest.fixture
def reply_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / f"{MODULE}.py").write_text(
        "def greet(name, *, end='!'):\n    return 'hi ' + name + end\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield MODULE
    sys.modules.pop(MODULE, None)


def test_naming_a_function_imports_nothing_and_the_first_call_does(reply_side: str) -> None:
    greet = ImportedOnCall(reply_side).greet
    assert reply_side not in sys.modules
    assert repr(greet) == f"<{reply_side}:greet, imported on first call>"
    assert greet("ada", end=".") == "hi ada."
    assert reply_side in sys.modules
    assert greet("bob") == "hi bob!"


def test_a_missing_function_fails_on_its_first_call(reply_side: str) -> None:
    missing = ImportedOnCall(reply_side).wave
    with pytest.raises(AttributeError, match="wave"):
        missing()


def test_probes_for_dunder_names_are_not_taken_for_functions() -> None:
    module = ImportedOnCall("integrations.nowhere")
    assert not hasattr(module, "__wrapped__")
    assert copy.copy(module) is not None
