"""What names a repository's MCP server and the header its credential is sent in: shared by
the config's checks (agent), the vault (store), `resolver mcp` and /admin. Pure."""

from __future__ import annotations

import re
from typing import Final

SERVER_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,19}")
"""A server's key under `mcp:`; its tools reach the model as `<server>__<tool>`."""
HEADER_NAME: Final = re.compile(r"[A-Za-z0-9-]{1,64}")
MAX_REPO_CHARS: Final = 200
MAX_VALUE_CHARS: Final = 4000


def credential_problem(repo: str, server: str, header: str, value: str) -> str | None:
    """What is wrong with a credential someone asked to store, or None."""
    if not repo.strip() or len(repo) > MAX_REPO_CHARS:
        return "give the repository's full name, as its forge spells it"
    if not SERVER_NAME.fullmatch(server):
        return "a server's name is a-z, 0-9 and -, up to 20 characters, as under `mcp:`"
    if not HEADER_NAME.fullmatch(header):
        return "the header must be a header's name, like Authorization or X-Api-Key"
    if not value or len(value) > MAX_VALUE_CHARS or any(c in value for c in "\r\n\0"):
        return "the value must be one line of text"
    return None
