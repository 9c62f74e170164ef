"""How a change leaves the sandbox: as data, and only once the agent has stopped.

1. A second container, the exporter, mounts the workspace volume read-only. It keeps the
   volume (tmpfs) alive while the agent's container is killed and waited for.
2. In the exporter a fresh git index, built from the base listing the host sends (`git ls-tree
   -r` of the base commit, from the host's own clone), is compared with the work tree. The
   agent's own `.git` is never used: whatever it did to its hooks, config, index or objects
   does not matter.
3. The exporter writes a tar to stdout: a manifest of deleted paths, then every new or
   changed file, symlinks as links. The host reads it with caps (change.py).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from docker.utils.socket import frames_iter

from sandbox.change import Change, ChangeRejectedError, ExportLimits, read_change
from sandbox.container import remove_container
from sandbox.engine import SandboxError, client, engine_errors
from sandbox.execution import close_socket, wait_exit_code
from sandbox.naming import build_labels, job_name, new_token
from sandbox.policy import TMP, WORKDIR, SandboxPolicy
from sandbox.runtime import engine_runtimes, process_limits

EXPORTER_MEMORY: Final = "512m"
EXPORTER_PIDS: Final = 64
EXPORTER_TMP: Final = "512m"
_STDOUT: Final = 1
_STDERR_KEPT: Final = 4000

# Reads the base listing on stdin, writes the tar on stdout, and names nested repositories on
# stderr.
# Untracked caches are left out even where the repository does not ignore them.
SCRIPT: Final = r"""
set -eu
x=/tmp/export
mkdir -p "$x"
cat > "$x/base"
export HOME="$x" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_OPTIONAL_LOCKS=0 LC_ALL=C
g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.untrackedCache=false \
  -c core.symlinks=true -c core.quotePath=false "$@"; }
g init -q --bare "$x/git"
export GIT_DIR="$x/git" GIT_WORK_TREE=/workspace GIT_INDEX_FILE="$x/index"
printf '%s\n' __pycache__/ '*.pyc' .pytest_cache/ .mypy_cache/ .ruff_cache/ > "$x/junk"
cd /workspace
g update-index -z --index-info < "$x/base"
g update-index -q --refresh > /dev/null || true
g diff-files -z --name-status > "$x/changed"
g ls-files -z --others --exclude-standard --exclude-from="$x/junk" > "$x/new"
: > "$x/deleted"; : > "$x/upserts"; : > "$x/nested"
while IFS= read -r -d '' status && IFS= read -r -d '' path; do
  if [ "$status" = D ]; then printf '%s\0' "$path" >> "$x/deleted"
  else printf '%s\0' "$path" >> "$x/upserts"; fi
done < "$x/changed"
while IFS= read -r -d '' path; do
  case "$path" in */) printf '%s\0' "$path" >> "$x/nested" ;;
    *) printf '%s\0' "$path" >> "$x/upserts" ;; esac
done < "$x/new"
tr '\0' '\n' < "$x/nested" | head -c 4000 >&2
exec tar -c -f - --format=pax --no-recursion --hard-dereference --null \
  -C "$x" deleted -C /workspace -T "$x/upserts"
"""


class Exported(Protocol):
    """The sandbox whose workspace is exported."""

    job_id: str
    volume: str
    policy: SandboxPolicy
    owner: str | None


def export_change(
    box: Exported, stop_agent: Callable[[], int], listing: bytes, limits: ExportLimits
) -> Change:
    """Start the exporter on the sandbox's volume, call `stop_agent()` (which kills the agent's
    container and returns how many stray processes it had), then read the change out."""
    exporter = _start_exporter(box)
    try:
        stopped = stop_agent()
        change = _read(exporter, box.policy.user, listing, limits)
    finally:
        remove_container(exporter)
    return replace(change, stopped_processes=stopped)


def stray_processes(container_id: str) -> int:
    """Processes still running in the container besides its init and main process, and besides
    the session's own shells (started by the engine, so their parent is outside)."""
    with engine_errors("list processes"):
        top = client().api.top(container_id, ps_args="-o pid,ppid")
    rows = [(int(pid), int(ppid)) for pid, ppid, *_ in top.get("Processes") or []]
    if not rows:
        return 0
    pids = {pid for pid, _ in rows}
    init = min(pids)
    children = sorted(pid for pid, ppid in rows if ppid == init)
    main = children[0] if children else None
    return sum(1 for pid, ppid in rows if pid not in (init, main) and ppid in pids)


def is_running(container_id: str) -> bool:
    with engine_errors("inspect sandbox"):
        state = client().api.inspect_container(container_id)["State"]
    return bool(state.get("Running")) and not state.get("Paused")


def _start_exporter(box: Exported) -> str:
    api = client().api
    policy = box.policy
    runtime = engine_runtimes(policy.runtime).plain
    host_config = api.create_host_config(
        binds={box.volume: {"bind": WORKDIR, "mode": "ro"}},
        network_mode="none",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"],
        read_only=True,
        tmpfs={TMP: f"rw,nosuid,nodev,size={EXPORTER_TMP},mode=1777"},
        mem_limit=EXPORTER_MEMORY,
        memswap_limit=EXPORTER_MEMORY,
        **process_limits(runtime, EXPORTER_PIDS),
        nano_cpus=int(policy.cpus * 1e9),
        ipc_mode="private",
        # It runs git on what the agent wrote: behind the same kernel boundary as the agent.
        runtime=runtime,
    )
    with engine_errors("create exporter"):
        container_id: str = api.create_container(
            policy.image,
            name=job_name(new_token(), box.job_id),
            user=f"{policy.user}:{policy.user}",
            working_dir=WORKDIR,
            labels=build_labels(
                box.job_id, box.volume, datetime.now(UTC), policy.deployment, box.owner
            ),
            host_config=host_config,
        )["Id"]
    try:
        with engine_errors("start exporter"):
            api.start(container_id)
    except SandboxError:
        remove_container(container_id)
        raise
    return container_id


def _read(exporter: str, user: int, listing: bytes, limits: ExportLimits) -> Change:
    api = client().api
    argv = ["timeout", "-s", "KILL", f"{limits.timeout:.0f}", "bash", "-c", SCRIPT, "export"]
    with engine_errors("export"):
        exec_id = api.exec_create(exporter, argv, stdin=True, user=f"{user}:{user}")["Id"]
        sock = api.exec_start(exec_id, socket=True)
    # exec_run has no timeout of its own: past the deadline the exporter goes, and the stream
    # with it.
    watchdog = threading.Timer(limits.timeout + 10, remove_container, args=(exporter,))
    watchdog.daemon = True
    watchdog.start()
    stream = _Stream(sock, limits.max_stream_bytes)
    try:
        stream.send(listing)
        change = read_change(stream, limits)
        stream.drain()
    except ChangeRejectedError:
        # A failed exporter sends a broken stream: its own words say more than tarfile's.
        if stream.ended and _exit_code(api, exec_id) != 0:
            raise _failed(stream) from None
        raise
    finally:
        watchdog.cancel()
        close_socket(sock)
    if _exit_code(api, exec_id) != 0:
        raise _failed(stream)
    return replace(change, skipped=tuple(line for line in stream.errors().splitlines() if line))


def _exit_code(api: Any, exec_id: str) -> int:
    with engine_errors("export"):
        return wait_exit_code(api, exec_id)


def _failed(stream: _Stream) -> ChangeRejectedError:
    return ChangeRejectedError(f"the change could not be read: {stream.errors() or 'no reason'}")


class _Stream:
    """The exec's stdout as a file for tarfile, cut off past `cap` bytes; stderr kept aside."""

    def __init__(self, sock: Any, cap: int) -> None:
        self._sock = sock
        self._raw: socket.socket = getattr(sock, "_sock", sock)
        self._frames: Iterator[tuple[int, bytes]] = frames_iter(sock, tty=False)
        self._cap = cap
        self._read = 0
        self._pending = b""
        self._stderr = bytearray()
        self.ended = False

    def send(self, data: bytes) -> None:
        with engine_errors("export"):
            self._raw.sendall(data)
            self._raw.shutdown(socket.SHUT_WR)

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self._pending) < size) and self._more():
            pass
        cut = len(self._pending) if size < 0 else size
        data, self._pending = self._pending[:cut], self._pending[cut:]
        return data

    def drain(self) -> None:
        while self._more():
            self._pending = b""

    def errors(self) -> str:
        return self._stderr.decode(errors="replace").strip()

    def _more(self) -> bool:
        with engine_errors("export"):
            frame = next(self._frames, None)
        if frame is None:
            self.ended = True
            return False
        stream, chunk = frame
        if stream != _STDOUT:
            self._stderr += chunk[: max(0, _STDERR_KEPT - len(self._stderr))]
            return True
        self._read += len(chunk)
        if self._read > self._cap:
            raise ChangeRejectedError("the change is larger than the limits allow")
        self._pending += chunk
        return True
