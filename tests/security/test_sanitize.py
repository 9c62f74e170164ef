"""Model-written text is made safe to show people: no hidden comments, no raw HTML, no
off-forge images, no pings. Pure."""

from __future__ import annotations

import pytest

from resolver.contract.outbound import has_hidden_tag, with_hidden_tag
from resolver.core.sanitize import sanitize

FORGE = {"github.example"}


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
