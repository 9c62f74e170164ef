"""Find the host's Debian mirror in its apt configuration; no mirror is written into the project."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

APT_DIR = Path("/etc/apt")
_ONE_LINE = re.compile(r"^deb\s+(?:\[[^\]]*\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)")


def parse_deb822(text: str, suite: str) -> str | None:
    """The first URI of a `Types: deb` stanza that carries `suite`, from a deb822 .sources file."""
    for stanza in text.split("\n\n"):
        fields = _deb822_fields(stanza)
        enabled = fields.get("enabled", "yes").lower() != "no"
        if enabled and "deb" in fields.get("types", "").split():
            uri = _first_http(fields.get("uris", "").split())
            if uri and suite in fields.get("suites", "").split():
                return uri
    return None


def parse_sources_list(text: str, suite: str) -> str | None:
    """The URI of the first one-line `deb` entry for `suite`; `[options]` are skipped."""
    for line in text.splitlines():
        match = _ONE_LINE.match(line)
        if match and match["suite"] == suite and _first_http([match["uri"]]):
            return match["uri"]
    return None


def find_mirror(suite: str, apt_dir: Path = APT_DIR) -> str | None:
    """The host's mirror for `suite`, from sources.list.d/*.sources first, then sources.list."""
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        if uri := parse_deb822(path.read_text(), suite):
            return uri
    lists = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in lists:
        if path.is_file() and (uri := parse_sources_list(path.read_text(), suite)):
            return uri
    return None


def render_sources(suite: str, mirror: str, security: str | None) -> str:
    """A one-line sources.list for the suite, its updates and, when known, its security suite."""
    lines = [f"deb {mirror} {suite} main", f"deb {mirror} {suite}-updates main"]
    if security:
        lines.append(f"deb {security} {suite}-security main")
    return "\n".join(lines) + "\n"


def _deb822_fields(stanza: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    key = ""
    for line in stanza.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line[0].isspace() and key:
            fields[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip().lower()
            fields[key] = value.strip()
    return fields


def _first_http(uris: Iterable[str]) -> str | None:
    return next((u for u in uris if u.startswith(("http://", "https://"))), None)


def apt_uris(apt_dir: Path = APT_DIR) -> list[str]:
    """Every http(s) URI of an enabled `deb` source: what apt on this host fetches from."""
    uris: list[str] = []
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = _deb822_fields(stanza)
            if (
                fields.get("enabled", "yes").lower() != "no"
                and "deb" in fields.get("types", "").split()
            ):
                uris += [u for u in fields.get("uris", "").split() if _first_http([u])]
    lists = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in lists:
        if path.is_file():
            matches = (_ONE_LINE.match(line) for line in path.read_text().splitlines())
            uris += [m["uri"] for m in matches if m and _first_http([m["uri"]])]
    return list(dict.fromkeys(uris))
