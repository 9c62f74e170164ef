"""The hosts a job may reach: domains, each covering its subdomains, checked and narrowed. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

_LABEL: Final = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_NUMERIC: Final = re.compile(r"[0-9.]+")


class EgressConfigError(ValueError):
    """A domain list cannot be used; the message names the entry at fault."""


@dataclass(frozen=True)
class Allowance:
    """What one phase of a job (setup or agent) may reach through its proxy: the `domains`
    (each with its subdomains), or any public host when `anywhere`."""

    domains: tuple[str, ...] = ()
    anywhere: bool = False

    @property
    def nothing(self) -> bool:
        return not self.anywhere and not self.domains

    def allows(self, host: str) -> bool:
        return self.anywhere or any(covers(domain, host) for domain in self.domains)

    def describe(self) -> str:
        if self.anywhere:
            return "any public host"
        return ", ".join(self.domains) if self.domains else "no host"


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
    return parse_domains(part for part in re.split(r"[\s,]+", text) if part)


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
    return Allowance(tuple(granted)), tuple(refused)
