"""Run a function in a forked child of the test process and read back what it said: for what a
prefork worker's task process inherits from its parent."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_forked_child(report: Callable[[], str]) -> str:
    """`report()` as a forked child of this process returns it (or `error …` when it raises).
    The child leaves with `os._exit`, never through pytest's own exit."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            answer = report()
        except BaseException as error:  # the parent reports it
            answer = f"error {error!r}"
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    return answer
