"""The Docker client, and the one place where engine failures become SandboxError."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import docker
import docker.errors
import requests


class SandboxError(Exception):
    """The engine is unavailable, an image is missing, a container vanished: an infra failure."""


class SandboxNotFoundError(SandboxError):
    """The container (or image) the call named does not exist, or no longer does."""


class SandboxLostError(SandboxError):
    """The sandbox went away under its job, by no doing of the job's commands: its container was
    removed or killed from outside (an engine restart, a prune, an operator), or the engine
    cannot be reached. A fresh sandbox may well work where this one died."""


@lru_cache(maxsize=1)
def client() -> Any:
    """The process-wide Docker client, configured from DOCKER_HOST and friends. A forked child
    (a prefork worker's task process) makes its own: the parent's keeps its pooled connection
    to the engine, which the parent's reaper thread may be using at that moment."""
    with engine_errors("connect"):
        return docker.from_env()


os.register_at_fork(after_in_child=client.cache_clear)


@contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """Translate anything the engine or its transport raises into SandboxError."""
    try:
        yield
    except docker.errors.NotFound as error:
        raise SandboxNotFoundError(f"{action}: {error.explanation or error}") from error
    except docker.errors.APIError as error:
        raise SandboxError(f"{action}: {error.explanation or error}") from error
    except (docker.errors.DockerException, requests.RequestException, OSError) as error:
        raise SandboxLostError(f"{action}: Docker engine unavailable: {error}") from error
