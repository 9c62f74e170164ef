"""Squid's configuration for one job's proxy, and its access log as data. Pure.

The proxy forwards only: no cache, no interception of TLS (CONNECT is tunnelled as is), and
one log line per request, with the host the client asked for, in a format of our own. With no
cache, `read_ahead_gap` (16 KB by default) is how far Squid may read from the server ahead of
the client; 1 MB lets a plain-HTTP download stream instead of stalling every 16 KB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sandbox.hosts import WEB_PORTS, Allowance

PORT: Final = 3128
DIR: Final = "/srv/egress"
CONFIG: Final = f"{DIR}/squid.conf"
ALLOW: Final = f"{DIR}/allow"
# On the proxy's tmpfs, read by an attached shell (sandbox/proxylog.py). Squid appends
# (O_APPEND), also after a reconfigure, so the reader's offset stays good.
ACCESS_LOG: Final = f"{DIR}/access.log"
CACHE_LOG: Final = f"{DIR}/cache.log"
# Squid writes this line to cache.log each time it has (re)opened its port.
LISTENING: Final = "Accepting HTTP Socket connections"
# Start time of the request, squid's result code / HTTP status, method, host, URL, bytes.
LOG_FORMAT: Final = "%tS %Ss/%03>Hs %rm %>rd %ru %<st"

# `open` reaches the public internet, not the engine's host, its neighbours or a cloud's
# metadata service: a name that resolves to a private address is refused.
_PRIVATE: Final = (
    "0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.168.0.0/16"
)
_COMMON: Final = f"""\
http_port {PORT}
pid_filename none
pinger_enable off
cache deny all
cache_mem 0 MB
read_ahead_gap 1 MB
coredump_dir /tmp
shutdown_lifetime 0 seconds
forwarded_for delete
httpd_suppress_version_string on
logformat egress {LOG_FORMAT}
access_log stdio:{ACCESS_LOG} egress
cache_log stdio:{CACHE_LOG}
"""
# A listed domain on the web's ports: plain HTTP to 80, a tunnel to 443. Without the ports a
# tunnel would reach any service on a listed host (its SSH, a database).
_PLAIN_PORT, _TUNNEL_PORT = WEB_PORTS
_LISTED: Final = f"""\
acl listed dstdomain -n "{ALLOW}"
acl plain_port port {_PLAIN_PORT}
acl tunnel_port port {_TUNNEL_PORT}
http_access allow listed !CONNECT plain_port
http_access allow listed CONNECT tunnel_port
"""
# A listed domain that resolves to a private address is refused all the same.
_PUBLIC_ONLY: Final = f"""\
acl private dst {_PRIVATE}
http_access deny private
"""
_ANYWHERE: Final = f"""\
acl private dst {_PRIVATE}
acl web_ports port 80 443
http_access deny private
http_access deny !web_ports
http_access allow all
"""


def render_config(allowance: Allowance) -> str:
    """squid.conf for the allowance; the domains themselves go in `render_allow`'s file."""
    if allowance.anywhere:
        return _COMMON + _ANYWHERE
    public = _PUBLIC_ONLY if allowance.public_only else ""
    return _COMMON + public + _LISTED + _other_ports(allowance) + "http_access deny all\n"


def _other_ports(allowance: Allowance) -> str:
    """Per other port, the domains that may be reached on it (names checked by hosts.py)."""
    by_port: dict[int, list[str]] = {}
    for domain, port in allowance.ports:
        by_port.setdefault(port, []).append(f".{domain}")
    return "".join(
        f"acl listed_{port} dstdomain -n {' '.join(domains)}\n"
        f"acl port_{port} port {port}\n"
        f"http_access allow listed_{port} port_{port}\n"
        for port, domains in sorted(by_port.items())
    )


def render_allow(allowance: Allowance) -> str:
    """The dstdomain file: `.example.org` matches example.org and every subdomain."""
    return "".join(f".{domain}\n" for domain in allowance.domains)


@dataclass(frozen=True)
class LogEntry:
    """One request the proxy saw."""

    time: float
    host: str
    method: str
    status: int
    blocked: bool
    url: str


def parse_log(text: str) -> list[LogEntry]:
    """The access log's complete lines as entries; a line that is not ours is skipped."""
    entries = []
    for line in text.splitlines():
        entry = parse_line(line)
        if entry is not None:
            entries.append(entry)
    return entries


def parse_line(line: str) -> LogEntry | None:
    fields = line.split()
    if len(fields) < 5:
        return None
    start, result, method, host, url = fields[:5]
    code, _, status = result.partition("/")
    try:
        return LogEntry(float(start), host.lower(), method, int(status), _denied(code), url)
    except ValueError:
        return None


def _denied(code: str) -> bool:
    # TCP_DENIED: an http_access rule said no (the proxy answers 403 itself).
    return code.startswith("TCP_DENIED")
