"""What names a repository's MCP server, the header its credential is sent in and the origin
that credential is bound to: shared by the config's checks (agent), the vault (store),
`resolver mcp` and /admin. Pure.

A credential goes only to the origin (scheme, host and port) the operator stored it for, never
to whatever URL a repository's config names: that config is the repository's, and untrusted.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

SERVER_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,19}")
"""A server's key under `mcp:`; its tools reach the model as `<server>__<tool>`."""
HEADER_NAME: Final = re.compile(r"[A-Za-z0-9-]{1,64}")
MAX_REPO_CHARS: Final = 200
MAX_VALUE_CHARS: Final = 4000
MAX_ORIGIN_CHARS: Final = 300
DEFAULT_PORTS: Final = {"https": 443, "http": 80}


class OriginError(ValueError):
    """A URL a credential cannot be bound to; the message says why."""


@dataclass(frozen=True)
class Origin:
    """Where a credential may be sent: a scheme, a lower-case ASCII host and a port."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS.get(self.scheme) == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def private(self) -> bool:
        """Whether a secret may travel to it: over https, or over plain http to this machine."""
        return self.scheme == "https" or (self.scheme == "http" and _loopback(self.host))


def origin_of(scheme: str, host: str, port: int | None) -> Origin:
    """The origin of a URL's parts; no port is the scheme's default."""
    scheme = scheme.lower()
    return Origin(scheme, host.lower(), DEFAULT_PORTS.get(scheme, 0) if port is None else port)


def parse_origin(text: str) -> Origin:
    """The origin of the URL (or bare origin) an operator gives a credential; OriginError
    says what is wrong. Plain http is refused unless the host is this machine."""
    text = text.strip()
    if not text or len(text) > MAX_ORIGIN_CHARS or not _plain(text):
        raise OriginError("give the server's URL, like https://mcp.example.com/mcp (host in ASCII)")
    parts = urlsplit(text)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise OriginError("the server's URL must be an https URL, like https://mcp.example.com/mcp")
    if parts.username is not None or parts.password is not None:
        raise OriginError("the server's URL must not carry a user or a password")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise OriginError("the server's URL has a port that is no port")
    origin = origin_of(parts.scheme, parts.hostname, port)
    if not origin.private:
        raise OriginError(
            f"{origin} is plain http to another machine: a credential is only sent over https"
        )
    return origin


def credential_withheld(server: Origin | None, bound: str | None, name: str) -> str | None:
    """Why the credential of the server `name`, bound to `bound`, is not sent to a server at
    `server` (None: its URL does not read), or None when it may be."""
    how = f"`resolver mcp bind <repository> {name} <URL>`, or store it again at /admin"
    if bound is None:
        return f"it was stored before credentials were bound to a server's URL; bind it: {how}"
    try:
        allowed = parse_origin(bound)
    except OriginError:
        return f"its stored origin {bound!r} is not one; bind it again: {how}"
    if server is None:
        return "the repository's URL for the server does not read as a URL"
    if server != allowed:
        return f"it is for {allowed}, and the repository's config names {server}"
    return None


def credential_problem(repo: str, server: str, header: str, value: str) -> str | None:
    """What is wrong with a credential someone asked to store, or None."""
    if not repo.strip() or len(repo) > MAX_REPO_CHARS:
        return "give the repository's full name, as its forge spells it"
    if not SERVER_NAME.fullmatch(server):
        return "a server's name is a-z, 0-9 and -, up to 20 characters, as under `mcp:`"
    if not HEADER_NAME.fullmatch(header):
        return "the header must be a header's name, like Authorization or X-Api-Key"
    if not value or len(value) > MAX_VALUE_CHARS or any(c in value for c in "\r\n\0"):
        return "the value must be one line of text"
    return None


def _plain(text: str) -> bool:
    """Printable ASCII with no space or backslash: no text two URL parsers could read apart."""
    return text.isascii() and text.isprintable() and not any(c in text for c in " \\")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
