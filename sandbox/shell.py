"""The shell side of a command: how it is wrapped, run, killed and checked. Runs nothing itself.

Each command runs in a fresh bash that first restores the session's directory and exported
variables from the container's tmpfs and saves them again on exit, so a session behaves like one
shell. `timeout` leads its own process group (it calls setpgid itself), and `-s KILL` kills that
whole group in place: it needs no new process, so it works even when a fork bomb holds every pid.

A session's commands are started by one long-lived bash (SERVER), fed over its stdin, so a
command costs a fork in the container rather than a new exec through the engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

# $1 run token, $2 working directory or "", $3 the command, then NAME=VALUE pairs to export.
# One pipe for stdout and stderr keeps their order; no stdin, so nothing waits for input.
# The process group id is the run's handle for `interrupt`; builtins only, to keep forks out.
# On exit it saves the directory and exports, and records that it ended by itself.
WRAPPER: Final = r"""
exec 2>&1 </dev/null
__rs=/tmp/.resolver
[ -d "$__rs" ] || mkdir -m 700 "$__rs"
read -r _ _ _ _ __rg _ < /proc/$$/stat
echo "$1 $__rg" > "$__rs/run"
[ -r "$__rs/env" ] && . "$__rs/env" 2>/dev/null
[ -r "$__rs/cwd" ] && read -r __rd < "$__rs/cwd" && cd -- "$__rd" 2>/dev/null
trap 'rc=$?; pwd > /tmp/.resolver/cwd; export -p > /tmp/.resolver/env
  echo $rc > /tmp/.resolver/exit; exit $rc' EXIT
for __rkv in "${@:4}"; do export "$__rkv"; done
if [ -n "$2" ]; then cd -- "$2" || exit 1; fi
__rc=$3
unset __rs __rg __rd __rkv
eval "$__rc"
"""

# Kills the process group of the run named by $1, trying $2 times 20 ms apart while the run
# has yet to record itself.
KILLER: Final = r"""
for ((i = 0; i < $2; i++)); do
  read -r t g < /tmp/.resolver/run 2>/dev/null
  [ "$t" = "$1" ] && exec kill -KILL -- "-$g" 2>/dev/null
  sleep 0.02
done
"""

# The memory cgroup's files holding the OOM-kill counter: cgroup v1 first, then v2.
OOM_FILES: Final = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")
OOM_COUNTER: Final = f"cat {' '.join(OOM_FILES)} 2>/dev/null; true"

# Reads requests from stdin, each a run of NUL-terminated fields: the reply's token, argc, argv.
# Runs argv in the foreground (so signals keep their default dispositions), then answers with
# NUL, the token, a space, the exit code and a newline, then the OOM files ($@), then NUL.
# Its own stderr is dropped: bash reports a killed job there ("Killed ..."), which is no output.
# A SIGKILL status without the record the wrapper's EXIT trap writes means a kill, and when the
# command killed `timeout` itself the rest of its group lives on; so the reply waits until that
# group is gone, which `timeout`, `interrupt` or the host's watchdog sees to. Only that wait
# forks (sleep); the rest is builtins.
SERVER: Final = r"""
exec 2>/dev/null
__rs=/tmp/.resolver
while IFS= read -r -d '' __end && IFS= read -r -d '' __argc; do
  __argv=()
  for ((__i = 0; __i < __argc; __i++)); do
    IFS= read -r -d '' __arg || exit
    __argv+=("$__arg")
  done
  [ -d "$__rs" ] || mkdir -m 700 "$__rs"
  : 2>/dev/null > "$__rs/exit"
  : 2>/dev/null > "$__rs/run"
  "${__argv[@]}" </dev/null 2>&1
  __rc=$?
  if [ "$__rc" = 137 ] && ! read -r _ 2>/dev/null < "$__rs/exit"; then
    __rg=
    read -r _ __rg 2>/dev/null < "$__rs/run"
    while [ -n "$__rg" ] && kill -0 -- "-$__rg" 2>/dev/null; do sleep 0.01; done
  fi
  printf '\0%s %d\n' "$__end" "$__rc"
  for __f in "$@"; do
    [ -r "$__f" ] && while IFS= read -r __l; do printf '%s\n' "$__l"; done < "$__f"
  done
  printf '\0'
done
"""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def command_argv(
    token: str, command: str, timeout: float, cwd: str | None, env: Mapping[str, str]
) -> list[str]:
    """The exec argv of one command, killed with its whole process group after `timeout`."""
    for name in env:
        if not _NAME.fullmatch(name):
            raise ValueError(f"not an environment variable name: {name!r}")
    exports = [f"{name}={value}" for name, value in env.items()]
    limit = f"{max(timeout, 0.001):.3f}"
    wrapper = ["bash", "--noprofile", "--norc", "-c", WRAPPER, "bash", token, cwd or ""]
    return ["timeout", "-s", "KILL", limit, *wrapper, command, *exports]


def server_argv() -> list[str]:
    return ["bash", "--noprofile", "--norc", "-c", SERVER, "bash", *OOM_FILES]


def encode_request(reply_token: str, argv: list[str]) -> bytes:
    """One request for SERVER. ValueError if an argument holds a NUL, as no argument can."""
    fields = [reply_token, str(len(argv)), *argv]
    if any("\0" in field for field in fields):
        raise ValueError("invalid argument: the command holds a NUL byte")
    return b"".join(field.encode(errors="replace") + b"\0" for field in fields)


def killer_argv(token: str, tries: int) -> list[str]:
    return ["bash", "--noprofile", "--norc", "-c", KILLER, "bash", token, str(tries)]


def parse_oom_kills(text: str) -> int:
    """The `oom_kill` count from memory.oom_control (v1) or memory.events (v2), 0 if absent."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0
