"""Loopback ports for servers that the tests and benches start in processes of their own.

A port probed with `bind(0)` and released is free only at that moment: until the child binds
it, a port the kernel hands out (to anyone's `bind(0)`, anyone's outgoing connection) may be
the same one. On a machine where the stack group and the benches run side by side, a server
then fails to start, or a bench measures somebody else's server. So these ports come from
outside the kernel's ephemeral range (below it, or above it where it starts low), which it never
hands out on its own, and each is held by a lock file for as long as the process that asked for
it lives (or until it has asked for `HELD` more): two processes of the project never get the
same one at once.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Final

SPAN: Final = 10_000
"""How many ports below the ephemeral range are drawn from (at most)."""
HELD: Final = 64
"""Reservations one process keeps: a server binds its port within seconds of the request, and
the kernel keeps a bound port from anyone else after that."""
LOCKS: Final = Path(tempfile.gettempdir()) / "resolver-ports"

_held: deque[int] = deque()


def free_port() -> int:
    """A loopback port that nothing listens on, reserved for this process."""
    return reserve(candidates())


def candidates() -> range:
    """The ports below the kernel's ephemeral range (net.ipv4.ip_local_port_range), or above it
    where it starts too low to leave room below."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default
    below = range(max(1024, low - SPAN), low)
    return below if len(below) >= SPAN // 10 else range(high + 1, 65536)


def reserve(ports: Sequence[int]) -> int:
    """One of `ports` in a random order that no other process holds and nothing listens on,
    held by this process from now."""
    LOCKS.mkdir(mode=0o777, exist_ok=True)
    for port in random.sample(ports, len(ports)):
        try:
            fd = os.open(LOCKS / str(port), os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process holds it
            os.close(fd)
            continue
        if not _bindable(port):
            os.close(fd)
            continue
        _hold(fd)
        return port
    raise RuntimeError(f"no free loopback port among {len(ports)} (locks in {LOCKS})")


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _hold(fd: int) -> None:
    _held.append(fd)
    while len(_held) > HELD:
        os.close(_held.popleft())  # its server has long bound the port
