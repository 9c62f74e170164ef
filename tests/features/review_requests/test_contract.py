"""Reviews on request, decided without a stack: which words ask for a review, where each of the
model's comments may go on the host's own diff, the repository's `review` settings, and what
the summary says."""

from __future__ import annotations

import pytest

from resolver.contract.inbound import Sender, Trigger
from resolver.contract.outbound import CUT_MARK, MAX_BODY
from resolver.contract.review import diff_files, suggestion_block
from resolver.contract.triggers import ForgeIssue, PullRequest, Repository, ReviewRequest
from resolver.features.review_requests.contract import (
    Remark,
    ReviewConfig,
    ReviewConfigError,
    as_review_request,
    asks_for_review,
    parse_review_config,
    place,
    remarks_of,
    render_summary,
)

PATCH = """\
diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,4 @@
 def add(a, b):
-    return a - b
+    return a + b
+# a comment
--- a SQL-style line, removed
@@ -10,2 +11,2 @@ def mul(a, b):
 x = 1
-y = 2
+y = 3
diff --git a/old.py b/new.py
similarity index 90%
rename from old.py
rename to new.py
--- a/old.py
+++ b/new.py
@@ -1 +1 @@
-a
+b
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-bye
"""


@pytest.mark.parametrize(
    "text",
    [
        "review",
        "review this",
        "Review this PR please!",
        "can you review the merge request?",
        "review again",
        "please give this a quick review",
        "re-review",
    ],
)
def test_these_ask_for_a_review(text: str) -> None:
    assert asks_for_review(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fix the review comments",
        "address the review",
        "review the docs and fix typos",
        "what did you think of the preview?",
        "stop",
        "rebase",
    ],
)
def test_these_do_not(text: str) -> None:
    assert not asks_for_review(text)


def _trigger(subject: PullRequest | ForgeIssue, task: str) -> Trigger:
    return Trigger(task, Sender("1", "alice"), "k", subject)


def test_only_a_mention_on_a_pull_request_becomes_a_review_request() -> None:
    repo = Repository(full_name="o/r")
    pull = PullRequest(repo=repo, number=3, comment_id=9, part={"x": 1})
    made = as_review_request(_trigger(pull, "review this")).subject
    assert isinstance(made, ReviewRequest) and not made.auto
    assert (made.number, made.comment_id, made.part) == (3, 9, {"x": 1})
    assert as_review_request(_trigger(pull, "fix it")).subject is pull
    issue = ForgeIssue(repo=repo, number=3)
    assert as_review_request(_trigger(issue, "review this")).subject is issue


def test_the_diff_shows_each_side_of_each_hunk() -> None:
    files = diff_files(PATCH)
    calc = files["calc.py"]
    assert sorted(calc.right) == [1, 2, 3, 11, 12]
    assert sorted(calc.left) == [1, 2, 3, 10, 11]
    assert (calc.right[1].old_line, calc.right[1].new_line) == (1, 1)
    assert calc.right[2].old_line is None and calc.left[3].new_line is None
    assert files["new.py"].old_path == "old.py"
    assert files["gone.py"].right == {} and sorted(files["gone.py"].left) == [1]


def test_a_comment_on_a_line_the_diff_does_not_show_goes_to_the_summary() -> None:
    files = diff_files(PATCH)
    remarks = [
        Remark("calc.py", 2, "RIGHT", "adds now", "    return a + b  # sum"),
        Remark("calc.py", 1, "RIGHT", "context line"),
        Remark("calc.py", 2, "LEFT", "was wrong"),
        Remark("calc.py", 7, "RIGHT", "not in a hunk"),
        Remark("other.py", 1, "RIGHT", "not in the diff"),
        Remark("new.py", 1, "RIGHT", "renamed"),
    ]
    placed, outside = place(remarks, files)
    assert [(c.path, c.line, c.side, c.old_line, c.new_line) for c in placed] == [
        ("calc.py", 2, "RIGHT", None, 2),
        ("calc.py", 1, "RIGHT", 1, 1),
        ("calc.py", 2, "LEFT", 2, None),
        ("new.py", 1, "RIGHT", None, 1),
    ]
    assert placed[3].old_path == "old.py" and placed[0].suggestion == "    return a + b  # sum"
    assert [r.body for r in outside] == ["not in a hunk", "not in the diff"]


def test_a_review_fits_what_a_forge_takes() -> None:
    """Fifty long comments outside the diff, or a suggestion of 80,000 characters: GitHub
    refuses a body over 65,536, and with it the whole review."""
    files = diff_files(PATCH)
    long = [Remark(f"m{n}.py", 900, "RIGHT", "x" * 9_000) for n in range(50)]
    placed, outside = place([*long, Remark("calc.py", 2, "RIGHT", "b", "y\n" * 40_000)], files)
    summary = render_summary("s" * 20_000, "comment", outside, "")
    assert len(summary) <= MAX_BODY and summary.endswith(CUT_MARK)
    [comment] = placed
    assert comment.suggestion is None and "too long to show" in comment.body


def test_since_the_last_review_only_the_new_lines_of_the_head_take_comments() -> None:
    files = diff_files(PATCH)
    newer = diff_files(PATCH.split("@@ -10,2")[0])  # only the first hunk changed since
    remarks = [Remark("calc.py", 3, "RIGHT", "new"), Remark("calc.py", 12, "RIGHT", "old")]
    placed, outside = place(remarks, files, newer)
    assert [c.line for c in placed] == [3] and [r.line for r in outside] == [12]


def test_the_trajectory_s_comments_are_read_defensively() -> None:
    calls = [
        {"path": "/a.py", "line": 3, "body": " x ", "side": "LEFT", "suggestion": "y"},
        {"path": "a.py", "line": "3", "body": "not a line number"},
        {"path": "b.py", "line": 4, "body": "ok", "suggestion": "z"},
    ]
    assert remarks_of(calls) == [
        Remark("a.py", 3, "LEFT", "x", None),  # a suggestion replaces a line of the head only
        Remark("b.py", 4, "RIGHT", "ok", "z"),
    ]


def test_a_suggestion_cannot_close_its_own_fence() -> None:
    assert suggestion_block("x = 1\n") == "```suggestion\nx = 1\n```"
    assert suggestion_block("s = '```'") == "````suggestion\ns = '```'\n````"


def test_the_review_settings_are_checked() -> None:
    assert parse_review_config({}) == ReviewConfig()
    config = parse_review_config(
        {"review": {"auto": True, "paths": ["src/*"], "ignore": ["src/gen_*"], "max_files": 5}}
    )
    assert config.auto and config.skip_drafts and config.max_files == 5
    assert config.covers("src/a.py") and not config.covers("src/gen_a.py")
    assert not config.covers("docs/a.md")
    for bad, says in [
        ({"review": True}, "must be a mapping"),
        ({"review": {"auto": "yes"}}, "review.auto"),
        ({"review": {"paths": "src"}}, "review.paths"),
        ({"review": {"max_files": 0}}, "review.max_files"),
        ({"review": {"approve": True}}, "unknown keys: approve"),
    ]:
        with pytest.raises(ReviewConfigError, match=says):
            parse_review_config(bad)


def test_the_summary_says_what_had_no_line_what_was_reviewed_and_what_ran() -> None:
    outside = [Remark("a.py", 9, "RIGHT", "never tested"), Remark("b.py", 2, "LEFT", "gone")]
    text = render_summary("Looks risky.", "request_changes", outside, "### Verification", "ab" * 20)
    assert text.startswith("**Changes requested.**\n\nLooks risky.")
    assert "- `a.py` line 9: never tested" in text and "`b.py` line 2 (the old side)" in text
    assert "only what changed since my last review (abababababab)" in text
    assert text.endswith("### Verification")
    assert render_summary("", "comment", [], "").startswith("I have no comments")
