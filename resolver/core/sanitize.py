"""What the model wrote, made safe to show people. Pure.

An agent's summary or answer goes into a pull request and a status message. A prompt-injected
model could hide things there: an HTML comment that forges the bot's own hidden tag, raw HTML,
an image that reports back to its own host when the page is viewed, @mentions that page people
or teams. Outside code, this removes comments and raw HTML (keeping the text), turns images
on hosts other than the forge's into plain links, and wraps @mentions in code so that they
notify nobody. Code spans and fenced blocks are kept as written: nothing in them is markup.

What is code is found by pattern, which a crafted text can fool (an escaped backtick, a span
across paragraphs, a table's cells or an autolink that split a span). So the result is rendered
as GitHub renders it (cmark-gfm, whose extensions GitLab's and Forgejo's Markdown share): should
raw HTML, an off-forge image or a live mention remain outside code, the whole text is defused
instead, code included (`_defused`), where nothing can be markup.
A closing keyword before an issue reference ("Fixes #12") is broken up, so that merging the
pull request closes no issue the model chose.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from html.parser import HTMLParser
from typing import Final
from urllib.parse import urlsplit

# A fenced block runs to a closing fence at least as long (or the end); a code span to the same
# run of ticks, within its paragraph. A backslash before a tick makes it no tick.
_CODE: Final = re.compile(
    r"^(?P<fence>[ \t]{0,3}(?P<mark>`{3,}(?=[^`\n]*$)|~{3,})).*?"
    r"(?:^[ \t]{0,3}(?P=mark)(?:(?<=`)`*|(?<=~)~*)[ \t]*$|\Z)"
    r"|(?<![`\\])(?P<ticks>`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)(?P=ticks)(?!`)",
    re.DOTALL | re.MULTILINE,
)
_COMMENT: Final = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG: Final = re.compile(
    r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<![A-Za-z][^<>]*>|<\?.*?(?:\?>|\Z)", re.DOTALL
)
_IMAGE: Final = re.compile(
    r"!\[(?P<alt>[^\[\]\n]*)\]\((?P<url>[^()\s]+)(?P<title>\s+\"[^\"]*\")?\)"
)
_REFERENCE_IMAGE: Final = re.compile(r"!\[(?P<alt>[^\[\]\n]*)\]\[(?P<ref>[^\[\]\n]*)\]")
# A login or a team (`@alice`, `@org/team`), or an account by its id as Bitbucket Cloud writes a
# mention in raw text (`@{557058:…}`), which notifies that account just the same.
_MENTION: Final = re.compile(
    r"(?<![\w@/.])@(?:(?P<name>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:/[A-Za-z0-9][\w.-]*)?)"
    r"|\{[^{}\s]+\})"
)


# A mention as a forge finds it in a page's text: `@` after anything but an ASCII letter, digit
# or underscore, before a login (GitLab's may begin with `_` or `.`), a team or `{an id}`.
_LIVE: Final = re.compile(
    r"(?<![A-Za-z0-9_])@(?:(?P<name>[A-Za-z0-9_.][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)?)"
    r"|\{[^{}\s]*\})"
)
# "Fixes #12", "closes org/repo#3", "Fixes issue #4", "Resolves https://…/issues/4", "Closes
# KEY-7": the forges close that issue when the pull request is merged (GitLab also reads
# "implements", and a Jira key where Jira is connected).
_CLOSING: Final = re.compile(
    r"\b(?P<word>(?:clos|fix|resolv|implement)[a-z]*)(?=[ \t]*:?[ \t]*(?:issues?[ \t]+)?"
    r"(?:(?:[\w.-]+(?:/[\w.-]+)*)?[#!]\d|https?://\S+/issues/\d|[A-Z][A-Z0-9_]+-\d))",
    re.IGNORECASE,
)
_CLOSING_WORDS: Final = re.compile(
    r"(?:close[sd]?|closing|fix(?:e[sd]|ing)?|resolve[sd]?|resolving|implement(?:s|ed|ing)?)",
    re.IGNORECASE,
)
_QUIET: Final = "\u200b"
"""A zero-width space: inside a word or after an @ it breaks what a forge would act on, and
shows nothing."""


def sanitize(text: str, image_hosts: Collection[str] = (), keep: Collection[str] = ()) -> str:
    """`text` with comments and raw HTML removed, images on hosts not in `image_hosts` turned
    into links, @mentions (but of the logins in `keep`) wrapped in code, and closing keywords
    broken; code untouched. Should a CommonMark reading of that still find markup in its
    prose, the whole text, defused as plain text."""
    kept = {login.lower() for login in keep}
    hosts = {host.lower() for host in image_hosts}
    made = "".join(part if is_code else _prose(part, hosts, kept) for part, is_code in _split(text))
    return made if is_defused(made, hosts, kept) else _defused(text, kept)


def _split(text: str) -> Iterator[tuple[str, bool]]:
    """The text as prose and code, in order."""
    position = 0
    for found in _CODE.finditer(text):
        yield text[position : found.start()], False
        yield found.group(0), True
        position = found.end()
    yield text[position:], False


def _prose(text: str, hosts: set[str], kept: set[str]) -> str:
    text = _COMMENT.sub("", text)
    text = _TAG.sub("", text)
    text = _IMAGE.sub(lambda found: _image(found, hosts), text)
    text = _REFERENCE_IMAGE.sub(r"[\g<alt>][\g<ref>]", text)
    text = _CLOSING.sub(_unclosing, text)
    return _MENTION.sub(lambda found: _mention(found, kept), text)


def code_span(text: str) -> str:
    """`text` as an inline code span that nothing in it can close: one line, ticks made
    quotes (a path, a command or a check's name that a repository chose)."""
    flat = " ".join(text.replace("`", "'").split())
    return f"`{flat}`"


def without_closing_keywords(text: str) -> str:
    """`text` with each closing keyword before an issue reference broken (a commit message:
    pushed to a default branch, it would close the issue)."""
    return _CLOSING.sub(_unclosing, text)


def _unclosing(found: re.Match[str]) -> str:
    word = found.group("word")
    if not _CLOSING_WORDS.fullmatch(word):
        return word
    return word[0] + _QUIET + word[1:]


def _defused(text: str, kept: set[str]) -> str:
    """The text with nothing in it markup that could act: no entity, no tag or autolink, no
    code span or backtick fence, no image; mentions (but of `kept`) and closing keywords
    broken by a zero-width space. Code shows its characters as written, but for those."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace("`", "&#96;")
    text = text.replace("![", "&#33;[")
    text = _CLOSING.sub(_unclosing, text)
    return _LIVE.sub(lambda found: _quieted(found, kept), text)


def _quieted(found: re.Match[str], kept: set[str]) -> str:
    return found.group(0) if _named(found) in kept else "@" + _QUIET + found.group(0)[1:]


def is_defused(text: str, image_hosts: Collection[str], kept: Collection[str] = ()) -> bool:
    """Whether `text`, as GitHub renders it (cmark-gfm, with tables and autolinks), has no raw
    HTML, no image on a host not in `image_hosts` and no live mention (but of the logins in
    `kept`) outside code and links."""
    import cmarkgfm

    html = cmarkgfm.markdown_to_html_with_extensions(text, extensions=_GFM)
    seen = _Rendered({host.lower() for host in image_hosts}, {k.lower() for k in kept})
    seen.feed(html)
    seen.close()
    return seen.harmless


_GFM: Final = ["table", "autolink", "strikethrough", "tasklist"]
"""GitHub's extensions: a table splits a code span at its cells, an autolink takes a tick."""
_SHIELDED: Final = frozenset({"a", "code", "pre"})
"""Where a forge finds no mention."""


class _Rendered(HTMLParser):
    """Reads rendered HTML for what would act: raw HTML (which cmark-gfm, in its safe mode,
    leaves as a comment), an image from elsewhere, a mention outside code and links."""

    def __init__(self, hosts: set[str], kept: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.hosts, self.kept = hosts, kept
        self.harmless, self.shielded = True, 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SHIELDED:
            self.shielded += 1
        if tag == "img":
            src = dict(attrs).get("src") or ""
            host = (urlsplit(src).hostname or "").lower() if "://" in src else ""
            self.harmless = self.harmless and host in self.hosts and bool(host)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SHIELDED and self.shielded:
            self.shielded -= 1

    def handle_comment(self, data: str) -> None:
        self.harmless = False  # "raw HTML omitted": the text holds raw HTML

    def handle_data(self, data: str) -> None:
        if not self.shielded and _live(data, self.kept):
            self.harmless = False


def _live(text: str, kept: set[str]) -> bool:
    return any(_named(found) not in kept for found in _LIVE.finditer(text))


def _named(found: re.Match[str]) -> str:
    return (found.group("name") or "").rstrip(".").lower()


def _image(found: re.Match[str], hosts: set[str]) -> str:
    url = found.group("url")
    host = (urlsplit(url).hostname or "").lower()
    if host and host in hosts:
        return found.group(0)
    return f"[{found.group('alt') or 'image'}]({url})"


def _mention(found: re.Match[str], kept: set[str]) -> str:
    name = found.group("name")
    return found.group(0) if name and name.lower() in kept else f"`{found.group(0)}`"
