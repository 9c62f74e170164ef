"""Which release each live worker runs, asked over the broker: a worker of this release
answers the `resolver_version` inspect command (registered by resolver.tasks, which every
worker loads); one of an older release answers a ping but not that, so it shows as None.
`resolver db upgrade` refuses while a worker of another release is alive."""

from __future__ import annotations

from typing import Any, Final

from resolver.broker.celery_app import get_celery
from resolver.broker.locks import server_version

COMMAND: Final = "resolver_version"


def worker_versions(redis_url: str, timeout: float = 1.0) -> dict[str, str | None]:
    """Each live worker's release (None: one too old to say); raises when Redis is down."""
    server_version(redis_url, timeout=2.0)  # fail fast rather than retry an absent broker
    control = get_celery().control
    alive = {name for reply in control.ping(timeout=timeout) for name in reply}
    said: dict[str, str | None] = dict.fromkeys(alive)
    for reply in control.broadcast(COMMAND, reply=True, timeout=timeout):
        for name, answer in reply.items():
            said[name] = _version_of(answer)
    return said


def _version_of(answer: Any) -> str | None:
    if isinstance(answer, dict) and isinstance(answer.get("version"), str):
        return str(answer["version"])
    return None
