"""Host directories bind-mounted at /workspace, owned by the sandbox's uid 1000."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Final

from sandbox.naming import new_token
from sandbox.policy import AGENT_UID

log = logging.getLogger(__name__)

PREFIX: Final = "ws-"


def create_workspace(root: Path) -> Path:
    """A fresh, empty directory under `root`, writable by the sandbox user."""
    root = root.resolve()
    # Only the engine (root) needs to reach workspaces, so the root stays private to its owner.
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = root / f"{PREFIX}{new_token()}{new_token()}"
    path.mkdir(mode=0o755)
    _give_to_agent(path)
    return path


def prepare_workspace(path: Path) -> None:
    """Hand a tree cloned on the host to the sandbox user (uid 1000), recursively."""
    _give_to_agent(path)
    for parent, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.lchown(os.path.join(parent, name), AGENT_UID, AGENT_UID)


def remove_workspace(path: Path) -> None:
    """Delete a workspace and everything in it; a missing one is already gone."""
    if path.exists():
        shutil.rmtree(path)


def is_workspace_of(path: Path, root: Path) -> bool:
    """Whether `path` is a workspace directly under `root` (labels are checked, not trusted)."""
    return path.name.startswith(PREFIX) and path.resolve().parent == root.resolve()


def _give_to_agent(path: Path) -> None:
    try:
        os.chown(path, AGENT_UID, AGENT_UID)
    except PermissionError:
        # An unprivileged worker cannot chown; the directory sits in a private root, so opening
        # it to everyone exposes it to the sandbox user alone.
        log.warning("sandbox.workspace.chmod_fallback", extra={"path": str(path)})
        path.chmod(0o777)
