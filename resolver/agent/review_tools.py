"""A reviewer's tools: `comment` on a line of the diff, and a `finish` that takes a verdict.

The comments are not posted from here: each is recorded in the trajectory (its observation's
`review_comment`), and the host reads them back after the run, checks every anchor against the
diff it computed itself, and posts one review. The verdict is never an approval.
"""

from __future__ import annotations

import json
from typing import Any, Final

from resolver.agent.editor import Files
from resolver.agent.tools import (
    EDITOR,
    EXECUTE_BASH,
    THINK,
    Finish,
    Observation,
    ToolRunner,
    _function,
    check_arguments,
)
from resolver.contract.review import VERDICTS

COMMENT: Final = _function(
    "comment",
    "Leave a review comment on one line of the pull request's diff. side: RIGHT for a line of "
    "the head (added or unchanged), LEFT for a removed line. suggestion (optional, RIGHT only): "
    "the text that should replace that line, which the author can apply with one click. A "
    "comment on a line outside the diff goes into the review's summary instead.",
    {
        "path": {"type": "string", "description": "The file's path in the head."},
        "line": {"type": "integer", "description": "The line's number on that side."},
        "side": {"type": "string", "enum": ["RIGHT", "LEFT"]},
        "body": {"type": "string", "description": "The comment, in Markdown."},
        "suggestion": {"type": "string"},
    },
    ["path", "line", "body"],
)
FINISH_REVIEW: Final = _function(
    "finish",
    "End the review. verdict: comment (nothing blocks the change) or request_changes (it "
    "should not merge as it is). summary: the review's overall message. You cannot approve.",
    {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "summary": {"type": "string", "description": "The review's summary, in Markdown."},
    },
    ["verdict", "summary"],
)
REVIEW_RULES: Final = """
This task is a review of a pull request, and the rules for `finish` above do not apply:
- The pull request's head is checked out at /workspace; the task message has its diff against
  its base. Read the code around the change, and run its tests or linters where you can.
- Leave a `comment` on each line that needs one: a bug, a risk, a missing test, a clearer way.
  Give a `suggestion` where you can write the replacement line. Say nothing about style a
  linter would catch, and do not praise.
- Your edits to files are never pushed or shown; change nothing to make a point.
- Then call `finish` with a verdict (comment, or request_changes when it should not merge as
  it is) and a summary of the review.
"""
REVIEW_TOOLS: Final = (EXECUTE_BASH, EDITOR, THINK, COMMENT, FINISH_REVIEW)
_SCHEMAS: Final = {
    t["function"]["name"]: t["function"]["parameters"] for t in (COMMENT, FINISH_REVIEW)
}
MAX_COMMENTS: Final = 50


class ReviewToolRunner(ToolRunner):
    """The agent's tools, with `comment` and a reviewer's `finish` in place of the worker's."""

    def __init__(self, sandbox: Files, output_limit: int, command_timeout: float) -> None:
        super().__init__(sandbox, output_limit, command_timeout)
        self._comments = 0

    def run(self, tool: str, raw_arguments: str, seconds_left: float) -> Observation:
        if tool not in _SCHEMAS:
            return super().run(tool, raw_arguments, seconds_left)
        args = _parsed(tool, raw_arguments)
        if isinstance(args, str):
            return Observation(args, error=True)
        return self._comment(args) if tool == "comment" else _finish(args)

    def _comment(self, args: dict[str, Any]) -> Observation:
        if self._comments >= MAX_COMMENTS:
            return Observation(f"You have left {MAX_COMMENTS} comments; finish now.", error=True)
        if args["line"] < 1 or not str(args["body"]).strip():
            return Observation("A comment needs a line from 1 on and a body.", error=True)
        self._comments += 1
        comment = {
            "path": str(args["path"]),
            "line": int(args["line"]),
            "side": str(args.get("side") or "RIGHT"),
            "body": str(args["body"]),
            "suggestion": args.get("suggestion"),
        }
        return Observation("Comment recorded.", details={"review_comment": comment})


def _parsed(tool: str, raw: str) -> dict[str, Any] | str:
    try:
        args = json.loads(raw or "{}")
    except ValueError as error:
        return f"The arguments of {tool} are not valid JSON ({error}). Send a JSON object."
    if not isinstance(args, dict):
        return f"The arguments of {tool} must be a JSON object."
    problem = check_arguments(_SCHEMAS[tool], args)
    return f"Invalid arguments for {tool}: {problem}." if problem else args


def _finish(args: dict[str, Any]) -> Observation:
    summary = str(args["summary"]).strip()
    if not summary:
        return Observation("finish needs a summary.", error=True)
    verdict = str(args["verdict"])
    return Observation(
        "Finished.", finish=Finish("answered", summary), details={"verdict": verdict}
    )
