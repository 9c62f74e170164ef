"""A forge's token for the host's git: sent as an Authorization header to one repository, from
config in the environment, so nothing is written to disk (`.git/config` is read by the sandbox)."""

from __future__ import annotations

import base64
from urllib.parse import urlsplit, urlunsplit

from resolver.contract.errors import PermanentCallbackError
from resolver.core.logs import redact, register_secret


def basic(user: str, token: str) -> str:
    """The `Basic` credentials of `user:token`."""
    return "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()


def repository_header_env(
    clone_url: str, token: str, authorization: str, *, forge: str
) -> dict[str, str]:
    """Environment for the host's git that sends `authorization` (made from `token`) to
    `clone_url`'s repository only. git matches `http.<url>.*` by URL prefix at a path boundary,
    so another repository on the same host gets none, and credentials in `clone_url` are not part
    of the key. Only http(s) may carry a token. Both the token and the header's credential are
    masked from here on, among the passing secrets."""
    parts = urlsplit(clone_url)
    host = parts.netloc.rpartition("@")[2]
    if parts.scheme not in ("http", "https") or not parts.hostname:
        bare = parts._replace(netloc=host).geturl()
        raise PermanentCallbackError(f"cannot send a {forge} token to {redact(bare)!r}: not HTTP")
    register_secret(token, passing=True)
    register_secret(authorization.partition(" ")[2], passing=True)
    repository = urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{repository}.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: {authorization}",
    }
