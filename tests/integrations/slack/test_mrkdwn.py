"""Markdown to Slack mrkdwn, and cutting texts to Slack's limit: pure functions."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from integrations.slack.mrkdwn import CUT_MARKER, FENCE, TEXT_LIMIT, fit, to_mrkdwn

# The only `<…>` the converter may emit: a link it built from `[text](http…)`.
BUILT_LINK = re.compile(r"<(?:https?://|mailto:)[^<>|\s]*\|[^<>|]*>", re.IGNORECASE)
ENTITY = re.compile(r"&(?:amp|lt|gt);")
PIECES = [
    *"ab <>&*-_`[]()|:/.\n\t",
    "http://",
    "https://x.test/",
    "**",
    "```",
    "- ",
    "[a](",
    "&amp;",
    "&lt;",
    "&#60;",
    "&#x3e;",
]
# Text made of the pieces the converter reacts to, so that links, fences and bold do occur.
MARKDOWNISH = st.lists(st.sampled_from(PIECES), max_size=40).map("".join) | st.text(max_size=200)


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**Done** in 2m", "*Done* in 2m"),
        ("see [PR #4](https://git.test/o/r/pull/4)", "see <https://git.test/o/r/pull/4|PR #4>"),
        ("**[the PR](https://git.test/p)**", "*<https://git.test/p|the PR>*"),
        ("- one\n  - two\n* three", "• one\n  • two\n• three"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("<!channel> <@U123> look", "&lt;!channel&gt; &lt;@U123&gt; look"),
        ("`**not bold**` and `a<b`", "`**not bold**` and `a&lt;b`"),
        ("**`make test`** failed", "*`make test`* failed"),
        (
            "```python\n- x **y** [a](https://b.test)\n```",
            "```\n- x **y** [a](https://b.test)\n```",
        ),
        ("```\nif a < b:\n```", "```\nif a &lt; b:\n```"),
        ("log:\n```\ntail", "log:\n```\ntail\n```"),
        ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
        ("[q](https://x.test/?a=1&b=2|3)", "<https://x.test/?a=1&amp;b=2%7C3|q>"),
        ("[a > b](https://x.test/>)", "<https://x.test/%3E|a &gt; b>"),
        ("[|[a](http://)", "[|[a](http://)"),
        ("2 * 3 * 4 and ** alone", "2 * 3 * 4 and ** alone"),
        ("already *slack bold* and _italic_", "already *slack bold* and _italic_"),
        # the sanitiser's plain-text fallback (resolver.core.sanitize._defused)
        ("run &#96;make&#96; &amp; &lt;b&gt; &#33;[x]", "run `make` &amp; &lt;b&gt; ![x]"),
        ("`&#96;` &ampx &#x26; &#1234567890;", "`&amp;#96;` &amp;ampx &amp; &amp;#1234567890;"),
        (
            "&lt;!channel&gt; [&lt;@U1&gt;](https://x.test)",
            "&lt;!channel&gt; <https://x.test|&lt;@U1&gt;>",
        ),
    ],
    ids=[
        "bold",
        "link",
        "link-in-bold",
        "lists",
        "escapes",
        "no-pings",
        "inline-code-kept",
        "code-in-bold",
        "fence-kept",
        "fence-escaped",
        "unclosed-fence",
        "unsafe-scheme",
        "pipe-in-url",
        "brackets-in-link",
        "pipe-in-label",
        "stray-stars",
        "slack-markup-passes",
        "references-read",
        "references-in-code-kept",
        "references-make-no-pings",
    ],
)
def test_to_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


@given(MARKDOWNISH)
def test_no_markup_from_the_text_survives(markdown: str) -> None:
    converted = to_mrkdwn(markdown)
    outside_links = BUILT_LINK.sub("", converted)
    assert "<" not in outside_links and ">" not in outside_links
    assert ENTITY.sub("", converted).count("&") == 0


@given(MARKDOWNISH, st.integers(min_value=60, max_value=400))
def test_fit_never_exceeds_the_limit(markdown: str, limit: int) -> None:
    text = to_mrkdwn(markdown * 5)
    cut = fit(text, limit)
    assert len(cut) <= limit
    assert cut == text or cut.endswith(CUT_MARKER)
    outside_links = BUILT_LINK.sub("", cut)
    assert "<" not in outside_links and ">" not in outside_links
    assert ENTITY.sub("", cut).count("&") == 0


def test_a_short_text_is_left_alone() -> None:
    text = "x" * TEXT_LIMIT
    assert fit(text) is text


def test_a_long_text_is_cut_at_the_limit_with_a_marker() -> None:
    cut = fit("y" * (TEXT_LIMIT + 1))
    assert len(cut) <= TEXT_LIMIT
    assert cut.startswith("y" * 1000) and cut.endswith(CUT_MARKER)


def test_the_cut_keeps_links_and_entities_whole_and_closes_an_open_fence() -> None:
    link = "<https://x.test/a|the pull request>"
    assert fit("a" * 130 + link + "b" * 100, 200) == "a" * 130 + CUT_MARKER
    fenced = fit(to_mrkdwn("```\n" + "x &\n" * 100 + "```"), 200)
    assert fenced.count(FENCE) == 2 and fenced.endswith(FENCE + CUT_MARKER)
    assert ENTITY.sub("", fenced).count("&") == 0
