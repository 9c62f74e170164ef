"""Status messages in Jira wiki markup: each construct of the Markdown subset, code kept verbatim,
and every other character Jira would read as markup escaped."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from integrations.jira.wiki import code_block, escape, to_wiki


@pytest.mark.parametrize(
    ("markdown", "wiki"),
    [
        ("**Done**: opened a pull request", "*Done*: opened a pull request"),
        (
            "[PR 12](https://git.example.com/o/r/pull/12)",
            "[PR 12|https://git.example.com/o/r/pull/12]",
        ),
        ("run `make test` first", "run {{make test}} first"),
        ("- one\n- two", "* one\n* two"),
        ("* one\n+ two", "* one\n* two"),
        ("- one\n  - nested\n    1. numbered", "* one\n** nested\n**# numbered"),
        ("1. first\n2. second", "# first\n# second"),
        ("# Summary", "h1. Summary"),
        ("### Tests ###", "h3. Tests"),
        ("> quoted", "bq. quoted"),
        ("---", "----"),
        ("plain words stay plain", "plain words stay plain"),
    ],
)
def test_each_construct(markdown: str, wiki: str) -> None:
    assert to_wiki(markdown) == wiki


@pytest.mark.parametrize(
    ("markdown", "wiki"),
    [
        ("Done. !https://evil.example/p.png?d=1!", "Done. \\!https://evil.example/p.png?d=1!"),
        ("!`x`!", "\\!{{x}}!"),
        ("wow! [PR](https://git.example.com/pr/1)", "wow! [PR|https://git.example.com/pr/1]"),
        (
            "see http://ok.example/a!http://evil.example/p.png!b",
            "see http://ok.example/a%21http://evil.example/p.png%21b",
        ),
        ("[a](!http://evil.example/p.png!)", "\\[a\\](\\!http://evil.example/p.png\\!)"),
        ("[](~accountid:557058:abcd)", "\\[\\](\\~accountid:557058:abcd)"),  # no mention
        ("[x](~admin)", "\\[x\\](\\~admin)"),
        ("[mail](mailto:a@b.example)", "[mail|mailto:a@b.example]"),
    ],
)
def test_a_bang_before_a_url_or_code_opens_no_image(markdown: str, wiki: str) -> None:
    """Jira's `!url!` shows the image at that URL, loaded by each reader's browser, and
    `[~name]` mentions a person: a link points only to a web page or an address."""
    assert to_wiki(markdown) == wiki


def test_a_status_message() -> None:
    markdown = (
        "**Resolver** finished: [draft PR #7](https://github.com/octo/widgets/pull/7)\n"
        "\n"
        "- changed `export.py`\n"
        "- ran the tests\n"
        "\n"
        "```python\n"
        "def export(rows: list[dict]) -> None: ...\n"
        "```"
    )
    assert to_wiki(markdown) == (
        "*Resolver* finished: [draft PR #7|https://github.com/octo/widgets/pull/7]\n"
        "\n"
        "* changed {{export.py}}\n"
        "* ran the tests\n"
        "\n"
        "{code:python}\n"
        "def export(rows: list[dict]) -> None: ...\n"
        "{code}"
    )


def test_nothing_is_converted_inside_a_fence() -> None:
    markdown = "```\n**not bold** [x](y) `z`\n- item\n```\nafter **bold**"
    assert to_wiki(markdown) == "{code}\n**not bold** [x](y) `z`\n- item\n{code}\nafter *bold*"


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert to_wiki("```sh\necho *\n\nmore") == "{code:bash}\necho *\n\nmore\n{code}"


def test_unknown_languages_are_left_out() -> None:
    assert to_wiki("```brainfuck\n+.\n```") == "{code}\n+.\n{code}"
    assert to_wiki("~~~YAML\na: 1\n~~~") == "{code:yaml}\na: 1\n{code}"


def test_a_fence_that_contains_the_code_macro_becomes_noformat() -> None:
    assert code_block("x {code} y", "") == "{noformat}\nx {code} y\n{noformat}"
    assert code_block("{code}{noformat}", "") == "{noformat}\n{code}{ noformat}\n{noformat}"


def test_an_indented_block_after_a_paragraph_is_code() -> None:
    markdown = "Ask an admin to run:\n\n    resolver users link ann --provider jira\n\nthen retry."
    assert to_wiki(markdown) == (
        "Ask an admin to run:\n\n"
        "{code}\nresolver users link ann --provider jira\n{code}\n\n"
        "then retry."
    )


def test_markup_characters_in_text_are_escaped() -> None:
    assert to_wiki("a * b and {braces} [brackets] a|b") == (
        "a \\* b and \\{braces\\} \\[brackets\\] a\\|b"
    )
    assert to_wiki("-strike- +ins+ ^sup^ ~sub~ _em_") == (
        "\\-strike\\- \\+ins\\+ \\^sup\\^ \\~sub\\~ \\_em\\_"
    )
    assert to_wiki("?? cite ??") == "\\?\\? cite \\?\\?"
    assert to_wiki("#3 is open") == "\\#3 is open"
    assert to_wiki("!image.png! but Done!") == "\\!image.png! but Done!"


def test_characters_inside_words_are_left_alone() -> None:
    text = "snake_case_name and fix-issue-12 and a+b and C# and x^2"
    assert to_wiki(text) == text


def test_bold_inside_a_word_uses_braced_marks() -> None:
    assert to_wiki("un**believ**able") == "un{*}believ{*}able"


def test_markup_inside_code_spans_is_escaped_and_urls_are_kept() -> None:
    assert to_wiki("`{{x}} *y*`") == "{{\\{\\{x\\}\\} \\*y\\*}}"
    assert to_wiki("see https://example.com/a_b-(c)*d?x=1.") == (
        "see https://example.com/a_b-(c)*d?x=1."
    )


def test_link_targets_cannot_break_out_of_the_link() -> None:
    assert to_wiki("[a|b](https://x.example/p|q]r)") == "[a\\|b|https://x.example/p%7Cq%5Dr]"


def test_backslashes_that_would_escape_show_as_an_entity() -> None:
    assert escape("C:\\dir") == "C:\\dir"
    assert escape("a\\*b") == "a&#92;\\*b"
    assert escape("\\\\") == "&#92;&#92;"
    assert to_wiki("end\\`{{x}}`") == "end&#92;{{\\{\\{x\\}\\}}}"


def test_line_endings_are_normalised() -> None:
    assert to_wiki("- a\r\n- b\r") == "* a\n* b\n"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises(markdown: str) -> None:
    assert isinstance(to_wiki(markdown), str)


BLOCK = re.compile(r"(?ms)^\{code(:[^}]*)?\}\n.*?\n\{code\}$|^\{noformat\}\n.*?\n\{noformat\}$")
MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            "**",
            "*",
            "`",
            "```",
            "[",
            "](",
            ")",
            "- ",
            "1. ",
            "#",
            "> ",
            "\n",
            "\n    ",
            " ",
            "{code}",
            "{",
            "}",
            "|",
            "\\",
            "!",
            "?",
            "_",
            "~~~",
            "http://x.example/",
            "a",
            "é",
        ]
    )
).map("".join)


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH)
def test_code_blocks_are_closed_and_macros_outside_them_escaped(markdown: str) -> None:
    outside = BLOCK.sub("", to_wiki(markdown))
    assert not re.search(r"(?<!\\)\{(code|noformat)", outside)


@given(st.text(alphabet=st.characters(categories=["L", "N"]) | st.just(" ")))
def test_words_pass_through_unchanged(text: str) -> None:
    # A line of nothing but spaces is a blank line, and comes out empty.
    assert to_wiki(text) == (text if text.strip() else "")
