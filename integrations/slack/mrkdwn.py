"""Resolver's Markdown subset as Slack mrkdwn, and texts cut to what Slack accepts. Pure.

Slack reads `&`, `<` and `>` as markup, so every one that comes from the text is escaped,
inside code too (Slack shows `&lt;` in code as `<`); the only `<…>` left are the links built
here, so a text can never ping `<!channel>` or a user. A character reference outside code
(`&#96;`, `&lt;`) is the character it names, as in Markdown: the sanitiser's plain-text
fallback writes them (`resolver.core.sanitize`), and Slack would show them as written.
https://api.slack.com/reference/surfaces/formatting#escaping
"""

from __future__ import annotations

import html
import re
from typing import Final
from urllib.parse import quote

# Slack truncates message text longer than this.
# https://api.slack.com/changelog/2018-04-truncating-really-long-messages
TEXT_LIMIT: Final = 40_000
CUT_MARKER: Final = "\n… (cut: the rest was too long for Slack)"
FENCE: Final = "```"

# One pass, left to right: a fence runs to the next ``` (or the end) and its info string
# (```python) is dropped, since Slack would show it as the first line of code.
_TOKEN: Final = re.compile(
    r"```(?:[\w+#.-]*\n)?(?P<fence>.*?)(?P<closed>```|\Z)"
    r"|`(?P<code>[^`\n]+)`"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>[^()\s]+)\)"
    r"|\*\*(?P<bold>[^\s*](?:[^\n]*?[^\s*])?)\*\*"
    r"|^(?P<indent>[ \t]*)[-*] (?=\S)",
    re.DOTALL | re.MULTILINE,
)
_LINKABLE: Final = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)
_ENTITIES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# A character reference as CommonMark reads one: named, decimal or hexadecimal, with its `;`.
_REFERENCE: Final = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def escape(text: str) -> str:
    """`&`, `<` and `>` as the entities Slack expects in plain text."""
    return "".join(_ENTITIES.get(char, char) for char in text)


def _prose(text: str) -> str:
    """Text outside code: its character references read, then escaped for Slack."""
    return escape(_REFERENCE.sub(lambda found: html.unescape(found.group(0)), text))


def to_mrkdwn(markdown: str) -> str:
    """`**bold**`, `[text](url)` and `- ` lists converted; code kept as written (escaped)."""
    parts: list[str] = []
    position = 0
    for found in _TOKEN.finditer(markdown):
        parts.append(_prose(markdown[position : found.start()]))
        parts.append(_convert(found))
        position = found.end()
    parts.append(_prose(markdown[position:]))
    return "".join(parts)


def _convert(found: re.Match[str]) -> str:
    groups = found.groupdict()
    if groups["fence"] is not None:
        return _fence(groups["fence"], closed=bool(groups["closed"]))
    if groups["code"] is not None:
        return f"`{escape(groups['code'])}`"
    if groups["bold"] is not None:
        return f"*{to_mrkdwn(groups['bold'])}*"
    if groups["url"] is not None:
        return _link(found)
    return f"{groups['indent']}• "


def _fence(body: str, *, closed: bool) -> str:
    # An unclosed fence runs to the end, as in Markdown; close it so Slack shows it as code.
    line_end = "" if closed or body.endswith("\n") else "\n"
    return f"{FENCE}\n{escape(body)}{line_end}{FENCE}"


def _link(found: re.Match[str]) -> str:
    label, url = found.group("label"), found.group("url")
    if not _LINKABLE.match(url) or "|" in label:
        # javascript: and friends stay visible text; so does a label with a `|`, which would
        # end the label of `<url|text>` and which Slack's markup has no escape for
        return escape(found.group(0))
    # `|` and `>` end the URL part of `<url|text>`; percent-encoding keeps the address intact.
    safe_url = escape(quote(url, safe=":/?#[]@!$&'*+,;=%~"))
    return f"<{safe_url}|{_prose(label)}>"


def fit(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text`, or as much of it as fits in `limit` characters followed by `CUT_MARKER`.

    The cut never splits an entity or a link, and a code fence left open is closed.
    """
    if len(text) <= limit:
        return text
    budget = max(0, limit - len(CUT_MARKER) - len(FENCE) - 1)
    kept = _without_partial_markup(text[:budget])
    if kept.count(FENCE) % 2:
        kept += f"\n{FENCE}"
    return (kept + CUT_MARKER)[:limit]


def _without_partial_markup(text: str) -> str:
    """`text` without a trailing `<link` or `&entity` that the cut left unfinished."""
    for opener, closer in (("<", ">"), ("&", ";")):
        start = text.rfind(opener)
        if start != -1 and closer not in text[start:]:
            text = text[:start]
    return text
