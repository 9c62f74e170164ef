"""The package registries this host itself uses, found at run time in its configuration: pip's
index (`pip config`, PIP_INDEX_URL), npm's registry and the apt sources. The project names no
registry; `registries` egress is whatever the worker's host is set up to use."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from sandbox.hosts import WEB_PORTS, parse_domain
from sandbox.mirror import APT_DIR, apt_uris

_TIMEOUT: Final = 20
# pip's built-in index when none is configured, and the host its files are served from: asked
# of pip itself, so that nothing here names them.
_PIP_DEFAULT: Final = (
    "from pip._internal.models.index import PyPI; print(PyPI.url); print(PyPI.file_storage_domain)"
)


@dataclass(frozen=True)
class Registries:
    """The registries' hosts, and the settings that point the sandbox's tools at them."""

    hosts: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    """Where each was found, for `resolver doctor`."""
    ports: tuple[tuple[str, int], ...] = ()
    """A registry's host with the port its URL names, where that is not a web port."""


def parse_pip_config(text: str) -> tuple[str | None, list[str]]:
    """`pip config list` output: the index URL (the last one set wins) and the extra ones."""
    index: str | None = None
    extra: list[str] = []
    for line in text.splitlines():
        key, _, value = line.partition("=")
        value = value.strip().strip("'\"")
        if key.endswith(".index-url"):
            index = value
        elif key.endswith(".extra-index-url"):
            extra += value.split()
    return index, extra


def host_of(url: str) -> str | None:
    """The host of an http(s) URL, as a domain; None for file: URLs, IP addresses and junk."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        return parse_domain(parts.hostname)
    except ValueError:
        return None


def without_credentials(url: str) -> str:
    """The URL without the user and password a private index's URL may carry: the host's
    credentials are never handed to the sandbox, where the agent and the repository's code
    could read them (its tools then reach only what the index serves without them)."""
    parts = urlsplit(url.strip())
    if "@" not in parts.netloc:
        return url.strip()
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=host).geturl()


def port_of(url: str) -> tuple[str, int] | None:
    """The host of an http(s) URL and the port it names, when that is not a web port."""
    host = host_of(url)
    try:
        port = urlsplit(url.strip()).port
    except ValueError:
        return None
    return None if host is None or port is None or port in WEB_PORTS else (host, port)


def find_registries(env: Mapping[str, str], apt_dir: Path = APT_DIR) -> Registries:
    """The registries of this host: pip's, npm's and apt's."""
    hosts: list[str] = []
    sandbox_env: dict[str, str] = {}
    sources: list[str] = []
    urls: list[str] = []
    index, extra = _pip_indexes(env)
    urls += [index or "", *extra]
    if index and host_of(index):
        sandbox_env["PIP_INDEX_URL"] = without_credentials(index)
    web_extra = [without_credentials(url) for url in extra if host_of(url)]
    if web_extra:
        sandbox_env["PIP_EXTRA_INDEX_URL"] = " ".join(web_extra)
    pip_hosts = _hosts([index or "", *extra])
    if not (index and host_of(index)):
        pip_hosts += _pip_default(env)
    hosts += pip_hosts
    sources += [f"pip: {h}" for h in pip_hosts]
    npm = _output(["npm", "config", "get", "registry"], env)
    if npm and host_of(npm):
        sandbox_env["npm_config_registry"] = without_credentials(npm)
        hosts += _hosts([npm])
        urls.append(npm)
        sources += [f"npm: {h}" for h in _hosts([npm])]
    apt_urls = apt_uris(apt_dir) if apt_dir.is_dir() else []
    apt = _hosts(apt_urls)
    hosts += apt
    sources += [f"apt: {h}" for h in apt]
    ports = [p for p in (port_of(url) for url in [*urls, *apt_urls]) if p]
    return Registries(
        tuple(dict.fromkeys(hosts)),
        sandbox_env,
        tuple(dict.fromkeys(sources)),
        tuple(dict.fromkeys(ports)),
    )


def _pip_indexes(env: Mapping[str, str]) -> tuple[str | None, list[str]]:
    index, extra = parse_pip_config(_output(["pip3", "config", "list"], env) or "")
    index = env.get("PIP_INDEX_URL") or index
    extra += env.get("PIP_EXTRA_INDEX_URL", "").split()
    return index, list(dict.fromkeys(extra))  # `pip config list` shows the variable's, too


def _pip_default(env: Mapping[str, str]) -> list[str]:
    # The interpreter that runs the host's pip3 (which may be a shim), as pip reports it.
    debug = _output(["pip3", "debug"], env) or ""
    pythons = [
        value.strip()
        for key, _, value in (line.partition(":") for line in debug.splitlines())
        if key == "sys.executable"
    ]
    python = next(iter(pythons), None)
    if python is None:
        return []
    lines = (_output([python, "-c", _PIP_DEFAULT], env) or "").splitlines()
    if len(lines) != 2:
        return []
    return _hosts([lines[0], f"https://{lines[1]}/"])


def _hosts(urls: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(h for h in (host_of(u) for u in urls) if h))


def _output(argv: list[str], env: Mapping[str, str]) -> str | None:
    """A tool's stdout, or None when the tool is missing or fails."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_TIMEOUT, check=False, env=dict(env)
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
