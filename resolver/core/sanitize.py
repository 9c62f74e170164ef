"""What the model wrote, made safe to show people. Pure.

An agent's summary or answer goes into a pull request and a status message. A prompt-injected
model could hide things there: an HTML comment that forges the bot's own hidden tag, raw HTML,
an image that reports back to its own host when the page is viewed, @mentions that page people
or teams. Outside code, this removes comments and raw HTML (keeping the text), turns images
on hosts other than the forge's into plain links, and wraps @mentions in code so that they
notify nobody. Code spans and fenced blocks are kept as written: nothing in them is markup.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Final
from urllib.parse import urlsplit

# A fenced block runs to its closing fence (or the end); a code span to the same run of ticks.
_CODE: Final = re.compile(
    r"^(?P<fence>[ \t]{0,3}(?P<mark>`{3,}|~{3,})).*?(?:^[ \t]{0,3}(?P=mark)[ \t]*$|\Z)"
    r"|(?P<ticks>`+).+?(?P=ticks)",
    re.DOTALL | re.MULTILINE,
)
_COMMENT: Final = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG: Final = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<![A-Za-z][^<>]*>|<\?.*?\?>")
_IMAGE: Final = re.compile(r"!\[(?P<alt>[^\]\n]*)\]\((?P<url>[^()\s]+)(?P<title>\s+\"[^\"]*\")?\)")
_REFERENCE_IMAGE: Final = re.compile(r"!\[(?P<alt>[^\]\n]*)\]\[(?P<ref>[^\]\n]*)\]")
# A login or a team (`@alice`, `@org/team`), or an account by its id as Bitbucket Cloud writes a
# mention in raw text (`@{557058:…}`), which notifies that account just the same.
_MENTION: Final = re.compile(
    r"(?<![\w@/`.])@(?:(?P<name>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:/[A-Za-z0-9][\w.-]*)?)"
    r"|\{[^{}\s]+\})"
)


def sanitize(text: str, image_hosts: Collection[str] = (), keep: Collection[str] = ()) -> str:
    """`text` with comments and raw HTML removed, images on hosts not in `image_hosts` turned
    into links, and @mentions (but of the logins in `keep`) wrapped in code; code untouched."""
    kept = {login.lower() for login in keep}
    hosts = {host.lower() for host in image_hosts}
    return "".join(part if is_code else _prose(part, hosts, kept) for part, is_code in _split(text))


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
    return _MENTION.sub(lambda found: _mention(found, kept), text)


def _image(found: re.Match[str], hosts: set[str]) -> str:
    url = found.group("url")
    host = (urlsplit(url).hostname or "").lower()
    if host and host in hosts:
        return found.group(0)
    return f"[{found.group('alt') or 'image'}]({url})"


def _mention(found: re.Match[str], kept: set[str]) -> str:
    name = found.group("name")
    return found.group(0) if name and name.lower() in kept else f"`{found.group(0)}`"
