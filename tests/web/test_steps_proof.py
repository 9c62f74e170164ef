"""The job page says which instruction files the agent was given and which checks it ran."""

from __future__ import annotations

from resolver.web.steps import block_of


def test_the_instruction_files_used() -> None:
    payload = {"files": [{"path": "AGENTS.md", "chars": 40, "cut": False}]}
    block = block_of(3, "instructions", payload, None)
    assert block is not None and (block.title, block.text) == (
        "Instruction files used",
        "AGENTS.md",
    )
    none = block_of(3, "instructions", {"files": []}, None)
    assert none is not None and none.text == "none in the default branch"


def test_the_verification() -> None:
    check = {"command": "pytest -q", "kind": "test", "exit_code": 0, "runs": 2}
    block = block_of(9, "verification", {"checks": [check], "not_run": ["lint"]}, None)
    assert block is not None and block.title == "Verification"
    assert block.text == "pytest -q · test · exit 0 · 2 run(s)\nnot run: lint"
