"""Resolver's Markdown as Jira wiki markup, the format of comment bodies in REST API v2. Pure.

The subset Resolver writes: `**bold**`, `[text](url)`, `` `code` ``, fenced and indented code
blocks, `- ` and `1. ` lists, `# ` headings, `> ` quotes. Everything else is text, with the
characters Jira would read as markup escaped.
https://jira.atlassian.com/secure/WikiRendererHelpAction.jspa?section=all
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

# The languages {code} highlights (others show an error panel), and common Markdown aliases.
CODE_LANGUAGES: Final = frozenset(
    {
        "actionscript",
        "ada",
        "applescript",
        "bash",
        "c",
        "c#",
        "c++",
        "css",
        "erlang",
        "go",
        "groovy",
        "haskell",
        "html",
        "java",
        "javascript",
        "json",
        "lua",
        "nyan",
        "objc",
        "perl",
        "php",
        "python",
        "r",
        "ruby",
        "scala",
        "sql",
        "swift",
        "visualbasic",
        "xml",
        "yaml",
    }
)
LANGUAGE_ALIASES: Final = {
    "py": "python",
    "sh": "bash",
    "shell": "bash",
    "console": "bash",
    "zsh": "bash",
    "js": "javascript",
    "yml": "yaml",
    "cpp": "c++",
    "cs": "c#",
    "csharp": "c#",
    "golang": "go",
    "rb": "ruby",
}

_FENCE: Final = re.compile(r"^ {0,3}(?P<mark>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
_HEADING: Final = re.compile(r"^ {0,3}(?P<level>#{1,6})\s+(?P<text>.*?)(?:\s+#+)?\s*$")
_QUOTE: Final = re.compile(r"^ {0,3}>\s?(?P<text>.*)$")
_RULE: Final = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_ITEM: Final = re.compile(r"^(?P<indent>\s*)(?P<marker>[-*+]|\d{1,9}[.)])\s+(?P<text>.*)$")
_INDENTED: Final = re.compile(r"^(?: {4}|\t)")
# Markdown hides an HTML comment (an agent's summary may hold one); wiki markup would show it.
_HTML_COMMENT: Final = re.compile(r"^\s*<!--(?:(?!-->).)*-->\s*$")
_INLINE: Final = re.compile(
    r"(?P<ticks>`+)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)"
    r"|\[(?P<label>[^\]\n]*)\]\((?P<target>[^()\s]+)\)"
    r"|\*\*(?=\S)(?P<bold>.+?)(?<=\S)\*\*"
    r"|(?P<url>https?://[^\s<>\[\]{}|]*[^\s<>\[\]{}|.,;:!?'\")])"
)
# Jira's phrase effects (*bold* _em_ -del- +ins+ ^sup^ ~sub~) open or close at a word boundary.
_EFFECTS: Final = frozenset("*_-+^~")
_ALWAYS: Final = frozenset("{}[]|")
# In a URL, what wiki markup would read: a `!` would open an image (`!url!`), a `~` a mention
# (`[~name]`). Each is the same URL percent-encoded.
_URL_UNSAFE: Final = {
    " ": "%20",
    "|": "%7C",
    "[": "%5B",
    "]": "%5D",
    "{": "%7B",
    "}": "%7D",
    "!": "%21",
    "~": "%7E",
}
_LINKABLE: Final = re.compile(r"(?:https?://|mailto:)[^\s]+", re.IGNORECASE)
"""What a link may point to: a web page or an address. Another target (`~accountid:…`, which
Jira reads as a person) is shown as text."""


def to_wiki(markdown: str) -> str:
    """The Markdown subset as Jira wiki markup; code blocks are kept verbatim."""
    return "\n".join(_blocks(markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")))


def _blocks(lines: list[str]) -> Iterator[str]:
    lists: list[tuple[int, str]] = []  # open list levels: (indent, "*" or "#")
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            body, index = _fenced(lines, index, fence.group("mark"))
            yield code_block(body, fence.group("info"))
            lists.clear()
        elif _starts_indented_code(lines, index, in_list=bool(lists)):
            body, index = _indented(lines, index)
            yield code_block(body, "")
        elif _HTML_COMMENT.match(line):
            index += 1
        else:
            yield _line(line, lists)
            index += 1


def _fenced(lines: list[str], start: int, mark: str) -> tuple[str, int]:
    """The fence's body and the index after its closing line (the end if it is unclosed)."""
    closing = re.compile(rf"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}\s*$")
    for index in range(start + 1, len(lines)):
        if closing.match(lines[index]):
            return "\n".join(lines[start + 1 : index]), index + 1
    return "\n".join(lines[start + 1 :]), len(lines)


def _starts_indented_code(lines: list[str], index: int, *, in_list: bool) -> bool:
    """Indented code follows a blank line and is not the continuation of a list item."""
    previous = lines[index - 1] if index else ""
    return (
        not in_list
        and not previous.strip()
        and bool(lines[index].strip())
        and bool(_INDENTED.match(lines[index]))
    )


def _indented(lines: list[str], start: int) -> tuple[str, int]:
    end = start
    while end < len(lines) and (_INDENTED.match(lines[end]) or not lines[end].strip()):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    body = [_INDENTED.sub("", line, count=1) for line in lines[start:end]]
    return "\n".join(body), end


def code_block(body: str, info: str) -> str:
    """`{code:lang}` around `body`, or `{noformat}` when the body itself contains `{code`."""
    lowered = body.lower()
    if "{code" not in lowered:
        language = LANGUAGE_ALIASES.get(info.lower(), info.lower())
        suffix = f":{language}" if language in CODE_LANGUAGES else ""
        return f"{{code{suffix}}}\n{body}\n{{code}}"
    if "{noformat" in lowered:
        # Neither macro can hold this body whole; break the inner tags apart.
        body = re.sub(r"\{(noformat)", r"{ \1", body, flags=re.IGNORECASE)
    return f"{{noformat}}\n{body}\n{{noformat}}"


def _line(line: str, lists: list[tuple[int, str]]) -> str:
    if not line.strip():
        return ""  # a list goes on after a blank line (an indented line there is not code)
    item = _ITEM.match(line)
    if item and not _RULE.match(line):
        return _list_item(item, lists)
    lists.clear()
    if _RULE.match(line):
        return "----"
    heading = _HEADING.match(line)
    if heading:
        return f"h{len(heading.group('level'))}. {inline(heading.group('text'))}"
    quote = _QUOTE.match(line)
    if quote:
        return f"bq. {inline(quote.group('text'))}"
    return inline(line)


def _list_item(item: re.Match[str], lists: list[tuple[int, str]]) -> str:
    """`* `, `** ` or `*# `… : Jira writes a nested item's level as its markers' path."""
    indent = len(item.group("indent").expandtabs(4))
    marker = "*" if item.group("marker") in ("-", "*", "+") else "#"
    while lists and indent < lists[-1][0]:
        lists.pop()
    if lists and indent == lists[-1][0]:
        lists[-1] = (indent, marker)
    else:
        lists.append((indent, marker))
    return "".join(level for _, level in lists) + " " + inline(item.group("text"))


def inline(text: str) -> str:
    """Code spans, links, bold and bare URLs converted; every other character escaped."""
    parts: list[str] = []
    position = 0
    for found in _INLINE.finditer(text):
        parts.append(
            escape(text[position : found.start()], *_around(text, position, found.start()))
        )
        before = parts[-1][-1:] if parts[-1] else text[found.start() - 1 : found.start()]
        after = text[found.end() : found.end() + 1]
        parts.append(_token(found, before, after))
        position = found.end()
    parts.append(escape(text[position:], *_around(text, position, len(text))))
    return "".join(parts)


def _around(text: str, start: int, end: int) -> tuple[str, str]:
    """The characters either side of `text[start:end]`: whether a character of a piece is
    markup depends on them too (`!` before a bare URL opens an image, `!https://…!`)."""
    return text[start - 1 : start] if start else "", text[end : end + 1]


def _token(found: re.Match[str], before: str, after: str) -> str:
    if found.group("ticks"):
        return _code_span(found.group("code"))
    if found.group("target") is not None:
        label, target = inline(found.group("label")), found.group("target")
        if not _LINKABLE.fullmatch(target):
            return escape(found.group(0), before, after)
        target = _url(target)
        return f"[{label}|{target}]" if label else f"[{target}]"
    if found.group("bold") is not None:
        # Jira's `*` opens only after a non-word character; `{*}` works inside a word.
        glued = before.isalnum() or after.isalnum()
        mark = "{*}" if glued else "*"
        return f"{mark}{inline(found.group('bold'))}{mark}"
    return _url(found.group("url"))


def _url(url: str) -> str:
    return "".join(_URL_UNSAFE.get(char, char) for char in url)


def _code_span(code: str) -> str:
    if code.startswith(" ") and code.endswith(" ") and code.strip():
        code = code[1:-1]
    return f"{{{{{escape(code)}}}}}" if code.strip() else escape(code)


def escape(text: str, before: str = "", after: str = "") -> str:
    """`text` with a backslash before each character Jira would read as markup, `before` and
    `after` being the characters either side of it in its line."""
    out: list[str] = []
    for index, char in enumerate(text):
        previous = text[index - 1] if index else before
        following = text[index + 1] if index + 1 < len(text) else after
        if char == "\\":
            # `\\` is a line break and `\{` an escape, also of markup that follows this text.
            plain = following.isalnum() or following.isspace()
            out.append(char if plain else "&#92;")
        elif _needs_escape(char, previous, following):
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _needs_escape(char: str, previous: str, following: str) -> bool:
    if char in _ALWAYS or char == "\\":
        return True
    if char in _EFFECTS:
        return not (previous.isalnum() and following.isalnum())
    if char == "!":
        return bool(following) and not following.isspace()  # `!image.png!`
    if char == "?":
        return "?" in (previous, following)  # `??citation??`
    return char == "#" and not previous  # a numbered list at the start of a line
