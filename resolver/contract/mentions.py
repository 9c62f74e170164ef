"""Finding `@bot` in comment text. Pure.

A mention counts only as a whole word and only in prose: not inside code spans, code blocks or
quoted replies (Markdown, HTML and Jira wiki markup), so quoting or documenting the bot never
starts a job. The text after the mention is the request.
"""

from __future__ import annotations

import re
from functools import lru_cache

_MASKED = (
    # Fenced code blocks; an unclosed fence runs to the end, as Markdown renders it.
    re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S),
    re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S),  # inline code spans
    re.compile(r"^[ \t]*>.*$", re.M),  # quoted reply lines
    re.compile(r"<(pre|code|blockquote)\b.*?</\1\s*>", re.S | re.I),
    re.compile(r"\{(code|noformat|quote)(?::[^}]*)?\}.*?(?:\{\1\}|\Z)", re.S | re.I),  # Jira
    re.compile(r"^[ \t]*bq\.\s.*$", re.M),  # Jira block quote line
    re.compile(r"\{\{.*?\}\}", re.S),  # Jira monospace
)
_LEADING_PUNCTUATION = re.compile("^[\\s,:;.!?)\\]\\-\u2013\u2014]+")


@lru_cache(maxsize=16)
def handle_pattern(bot_name: str) -> re.Pattern[str]:
    """`@bot_name` as a whole word, any case; GitHub's `@bot_name[bot]` too."""
    name = re.escape(bot_name)
    return re.compile(rf"(?<![\w@./+-])@{name}(?:\[bot\])?(?![\w-])", re.I)


def mask_quoted_and_code(text: str) -> str:
    """`text` with code and quotes blanked out, keeping every other character's position."""
    for pattern in _MASKED:
        text = pattern.sub(lambda m: _blank(m.group(0)), text)
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
