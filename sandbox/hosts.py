"""The hosts a job may reach: domains, each covering its subdomains, checked and narrowed. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

_LABEL: Final = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_NUMERIC: Final = re.compile(r"[0-9.]+")
_PORT: Final = re.compile(r"[0-9]{1,5}")
WEB_PORTS: Final = (80, 443)
"""Where a listed domain is reached: plain HTTP on 80, a tunnel (CONNECT) to 443."""


class EgressConfigError(ValueError):
    """A domain list cannot be used; the message names the entry at fault."""


@dataclass(frozen=True)
class Allowance:
    """What one phase of a job (setup or agent) may reach through its proxy: the `domains`
    (each with its subdomains) on the web's ports, or any public host when `anywhere`."""

    domains: tuple[str, ...] = ()
    anywhere: bool = False
    ports: tuple[tuple[str, int], ...] = ()
    """Another port on which one of `domains` (with its subdomains) may be reached, as
    `(domain, port)`, by plain HTTP or a tunnel: a registry whose index runs there."""
    public_only: bool = False
    """Its domains are reached at public addresses alone, as `anywhere` is: a repository's list
    within that level may not name the engine's host, a neighbour or a metadata service."""

    @property
    def nothing(self) -> bool:
        return not self.anywhere and not self.domains

    def allows(self, host: str) -> bool:
        return self.anywhere or any(covers(domain, host) for domain in self.domains)

    def describe(self) -> str:
        if self.anywhere:
            return "any public host"
        entries = [*self.domains, *(f"{domain}:{port}" for domain, port in self.ports)]
        return ", ".join(entries) if entries else "no host"


NOTHING: Final = Allowance()
ANYWHERE: Final = Allowance(anywhere=True)


def parse_domain(text: str) -> str:
    """`text` as a lower-case domain name; `*.x` and `.x` mean `x` (subdomains are covered
    anyway). EgressConfigError for anything else: IP addresses, URLs, ports, wildcards inside."""
    name = text.strip().lower().removeprefix("*.").removeprefix(".").rstrip(".")
    labels = name.split(".")
    if not name or len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise EgressConfigError(f"not a domain name: {text!r}")
    if _NUMERIC.fullmatch(name):
        raise EgressConfigError(f"an IP address is not a domain name: {text!r}")
    return name


def parse_domains(entries: Iterable[str]) -> tuple[str, ...]:
    """Each entry checked, in order, without duplicates."""
    return tuple(dict.fromkeys(parse_domain(entry) for entry in entries))


def split_list(text: str) -> tuple[str, ...]:
    """A comma- or space-separated setting as domains."""
    return parse_domains(_parts(text))


def parse_allowance(text: str) -> Allowance:
    """A comma- or space-separated list of domains, each alone (the web's ports) or as
    `domain:port` (that port too)."""
    domains: list[str] = []
    ports: list[tuple[str, int]] = []
    for part in _parts(text):
        name, _, port = part.partition(":")
        if not _PORT.fullmatch(port):  # no port: what follows a colon is the name's fault
            domains.append(parse_domain(part))
            continue
        domains.append(parse_domain(name))
        if not 0 < int(port) < 65536:
            raise EgressConfigError(f"not a port: {part!r}")
        ports.append((domains[-1], int(port)))
    return Allowance(
        tuple(dict.fromkeys(domains)),
        ports=tuple(p for p in dict.fromkeys(ports) if p[1] not in WEB_PORTS),
    )


def _parts(text: str) -> list[str]:
    return [part for part in re.split(r"[\s,]+", text) if part]


def covers(domain: str, host: str) -> bool:
    """Whether `domain` covers `host`: the same name, or one of its subdomains."""
    host = host.lower().rstrip(".")
    return host == domain or host.endswith("." + domain)


def narrow(maximum: Allowance, asked: Iterable[str]) -> tuple[Allowance, tuple[str, ...]]:
    """What a repository asked for, within the operator's `maximum`: the allowance it gets and
    the domains refused because they are beyond it."""
    granted: list[str] = []
    refused: list[str] = []
    for domain in parse_domains(asked):
        (granted if maximum.allows(domain) else refused).append(domain)
    # A granted domain keeps the other ports the maximum gives a domain that covers it.
    ports = [(d, port) for d in granted for within, port in maximum.ports if covers(within, d)]
    public_only = maximum.anywhere or maximum.public_only
    granted_ = Allowance(tuple(granted), ports=tuple(dict.fromkeys(ports)), public_only=public_only)
    return granted_, tuple(refused)
