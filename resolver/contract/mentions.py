"""Finding `@bot` in comment text. Pure.

A mention counts only as a whole word and only in prose: not inside code spans, code blocks or
quoted replies (Markdown, HTML and Jira wiki markup), so quoting or documenting the bot never
starts a job. The text after the mention is the request.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import lru_cache

# A backtick fence's info string has no tick (else the line is no fence); a fence left open runs
# to the end, as Markdown renders it.
_FENCE = re.compile(
    r"^[ \t]*(`{3,}(?=[^`\n]*$)|~{3,})[^\n]*(?:\n.*?(?:^[ \t]*\1[ \t]*$|\Z)|\Z)", re.M | re.S
)
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.M)
_WIKI_BLOCK = re.compile(r"\{(code|noformat|quote)(?::[^{}]*)?\}.*?(?:\{\1\}|\Z)", re.S | re.I)
_WIKI_QUOTE_LINE = re.compile(r"^[ \t]*bq\.\s.*$", re.M)
_TICKS = re.compile(r"`+")
_HTML_OPEN = re.compile(r"<(pre|code|blockquote)\b", re.I)


def _pattern(pattern: re.Pattern[str]) -> Callable[[str], str]:
    """Blank out each match of a pattern that ends at its close or at the end of the text (it
    never fails after a long scan, so it takes time in proportion to the text)."""
    return lambda text: pattern.sub(lambda m: _blank(m.group(0)), text)


def _code_spans(text: str) -> str:
    """Inline code spans: a run of ticks up to the next run of the same length. Found run by
    run, not by a pattern that, for each run without a close, would scan on to the end (a
    comment of 30,000 ticks took seconds)."""
    runs = [_unescaped(text, m.start(), m.end()) for m in _TICKS.finditer(text)]
    runs = [(start, end) for start, end in runs if end > start]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        later = bisect.bisect_right(same, index)
        if later == len(same):  # no close: these ticks are text
            index += 1
            continue
        close = same[later]
        spans.append((start, runs[close][1]))
        index = close + 1
    return _blank_spans(text, spans)


def _unescaped(text: str, start: int, end: int) -> tuple[int, int]:
    """A run of ticks less its first when a backslash escapes that one (an odd number of
    backslashes before it): the escaped tick is text, the rest of the run a run."""
    slashes = 0
    while slashes < start and text[start - slashes - 1] == "\\":
        slashes += 1
    return (start + 1, end) if slashes % 2 else (start, end)


def _enclosed(
    opening: re.Pattern[str], closing: Callable[[str], re.Pattern[str]]
) -> Callable[[str], str]:
    """Blank out from each `opening` to the first close after it (`closing` of the opening's
    name, its first group). With no close after an opening, none comes after a later one of
    the same name either: the search goes on past them, in time linear in the text."""

    def blank(text: str) -> str:
        spans: list[tuple[int, int]] = []
        unclosed: set[str] = set()
        position = 0
        while (found := opening.search(text, position)) is not None:
            name = found.group(1).lower() if found.groups() else ""
            if name in unclosed:
                position = found.end()
                continue
            close = closing(name).search(text, found.end())
            if close is None:
                unclosed.add(name)
                position = found.end()
                continue
            spans.append((found.start(), close.end()))
            position = close.end()
        return _blank_spans(text, spans)

    return blank


_MONOSPACE_CLOSE = re.compile(r"\}\}")


@lru_cache(maxsize=8)
def _html_close(name: str) -> re.Pattern[str]:
    return re.compile(rf"</{re.escape(name)}\s*>", re.I)


_MASKED: tuple[Callable[[str], str], ...] = (
    # Fenced code blocks; an unclosed fence runs to the end, as Markdown renders it.
    _pattern(_FENCE),
    _code_spans,  # inline code spans
    _pattern(_QUOTE_LINE),  # quoted reply lines
    _enclosed(_HTML_OPEN, _html_close),
    _pattern(_WIKI_BLOCK),  # Jira
    _pattern(_WIKI_QUOTE_LINE),  # Jira block quote line
    _enclosed(re.compile(r"\{\{()"), lambda _: _MONOSPACE_CLOSE),  # Jira monospace
)
_LEADING_PUNCTUATION = re.compile("^[\\s,:;.!?)\\]\\-\u2013\u2014]+")


@lru_cache(maxsize=16)
def handle_pattern(bot_name: str) -> re.Pattern[str]:
    """`@bot_name` as a whole word, any case; GitHub's `@bot_name[bot]` too."""
    name = re.escape(bot_name)
    return re.compile(rf"(?<![\w@./+-])@{name}(?:\[bot\])?(?![\w-])", re.I)


def mask_quoted_and_code(text: str) -> str:
    """`text` with code and quotes blanked out, keeping every other character's position."""
    for mask in _MASKED:
        text = mask(text)
    return text


def find_request(text: str | None, pattern: re.Pattern[str]) -> str | None:
    """The request after the first real mention matching `pattern`; None without a mention."""
    if not text or pattern.search(text) is None:  # most comments never name the bot
        return None
    found = pattern.search(mask_quoted_and_code(text))
    if found is None:
        return None
    return _LEADING_PUNCTUATION.sub("", text[found.end() :]).strip()


def mentions(text: str | None, bot_name: str) -> str | None:
    """The request after `@bot_name` in `text`, or None when the bot is not mentioned."""
    return find_request(text, handle_pattern(bot_name))


def _blank(span: str) -> str:
    # Keep newlines so ^/$ anchors of later patterns still see line starts.
    return re.sub(r"[^\n]", " ", span)


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts: list[str] = []
    position = 0
    for start, end in spans:
        parts += [text[position:start], _blank(text[start:end])]
        position = end
    parts.append(text[position:])
    return "".join(parts)
