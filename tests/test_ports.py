"""The ports that tests and benches give the servers they start (tests/support/ports.py): never
one the kernel may hand to somebody else meanwhile, never one another process holds, never one
something listens on."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ports import candidates, free_port, reserve

ROOT = Path(__file__).resolve().parents[1]


def test_ports_come_from_outside_the_range_the_kernel_hands_out() -> None:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ports = {free_port() for _ in range(5)}
    assert len(ports) == 5
    assert all(port in candidates() and not low <= port <= high for port in ports)


def test_a_port_another_process_holds_is_not_handed_out_until_it_ends() -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "from tests.support.ports import free_port\n"
         "print(free_port(), flush=True)\ninput()"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdin is not None
    try:
        port = int(holder.stdout.readline())
        with pytest.raises(RuntimeError, match="no free loopback port among 1"):
            reserve([port])
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert reserve([port]) == port


def test_a_process_is_not_given_its_own_port_twice() -> None:
    port = free_port()
    with pytest.raises(RuntimeError, match="no free loopback port among 1"):
        reserve([port])


def test_a_port_something_listens_on_is_skipped() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with pytest.raises(RuntimeError, match="no free loopback port among 1"):
            reserve([listener.getsockname()[1]])
