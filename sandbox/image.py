"""Build the sandbox image and the egress proxy's, from a registry base or, offline, from a
debootstrapped one.

The tag is a hash of the build's inputs, so `ensure_image` is a no-op until one changes.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

from sandbox.engine import SandboxError, client, engine_errors
from sandbox.mirror import APT_DIR, find_mirror, render_sources
from sandbox.registries import without_credentials

REPOSITORY: Final = "resolver-sandbox"
BASE_REPOSITORY: Final = "resolver-sandbox-base"
DOCKERFILE: Final = Path(__file__).with_name("Dockerfile")
PROXY_REPOSITORY: Final = "resolver-egress-proxy"
PROXY_DOCKERFILE: Final = Path(__file__).with_name("Dockerfile.proxy")
SUITE: Final = "bookworm"
VARIANT: Final = "minbase"
# The debootstrapped rootfs is kept between builds (and between clones of the project).
CACHE_DIR: Final = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "resolver"

Progress = Callable[[str], None]


def image_tag() -> str:
    """The hash-of-inputs tag, e.g. `resolver-sandbox:0123456789ab`."""
    return f"{REPOSITORY}:{_digest(DOCKERFILE.read_bytes(), _base_inputs())}"


def proxy_image_tag() -> str:
    """The egress proxy's hash-of-inputs tag, e.g. `resolver-egress-proxy:0123456789ab`."""
    return f"{PROXY_REPOSITORY}:{_digest(PROXY_DOCKERFILE.read_bytes(), _base_inputs())}"


def base_tag() -> str:
    """The tag of the image imported from debootstrap; it changes only with the suite or variant."""
    return f"{BASE_REPOSITORY}:{_digest(_base_inputs())}"


def ensure_image(offline: bool, progress: Progress | None = None) -> str:
    """Build the sandbox image unless its tag exists; return the tag."""
    return _ensure(image_tag(), DOCKERFILE, offline, progress)


def ensure_proxy_image(offline: bool, progress: Progress | None = None) -> str:
    """Build the egress proxy's image (Squid) unless its tag exists; return the tag."""
    return _ensure(proxy_image_tag(), PROXY_DOCKERFILE, offline, progress)


def _ensure(tag: str, dockerfile: Path, offline: bool, progress: Progress | None) -> str:
    if _image_exists(tag):
        return tag
    say = progress or (lambda _line: None)
    build_args = {"BASE": ensure_base(say)} if offline else {}
    _build(tag, dockerfile, build_args, say)
    return tag


def ensure_base(progress: Progress) -> str:
    """Import the debootstrapped base unless it exists; the rootfs tarball is cached in
    ~/.cache/resolver."""
    tag = base_tag()
    if _image_exists(tag):
        return tag
    tarball = CACHE_DIR / f"{SUITE}-{VARIANT}-{_digest(_base_inputs())}.tar"
    if not tarball.exists():
        _debootstrap(tarball, progress)
    progress(f"importing {tarball} as {tag}")
    repository, version = tag.split(":")
    with engine_errors("import base image"):
        client().api.import_image_from_file(str(tarball), repository=repository, tag=version)
    return tag


def base_mirrors(apt_dir: Path = APT_DIR) -> tuple[str, str | None]:
    """The host's Debian mirror for the base, and its security mirror when it has one.
    SandboxError when there is none, or when one carries a user and password: debootstrap
    would leave them in the image (its sources.list, apt's list files), where the agent and
    the repository's code read them, and the build's apt inside Docker has no other way in."""
    mirror = find_mirror(SUITE, apt_dir)
    if mirror is None:
        raise SandboxError(f"no Debian mirror for {SUITE} in the host's apt configuration")
    security = find_mirror(f"{SUITE}-security", apt_dir)
    for url in (mirror, security):
        if url is not None and without_credentials(url) != url.strip():
            raise SandboxError(
                f"the host's Debian mirror {without_credentials(url)} is given with a user and "
                "password, which the sandbox image would keep: give this host a mirror that "
                "needs none (a caching proxy such as apt-cacher-ng that signs in upstream), or "
                "build without --offline"
            )
    return mirror, security


def _debootstrap(tarball: Path, progress: Progress) -> None:
    mirror, security = base_mirrors()
    if os.geteuid() != 0:
        raise SandboxError("debootstrap needs root; run `resolver sandbox build --offline` as root")
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tarball.parent) as scratch:
        rootfs = Path(scratch) / "rootfs"
        progress(f"debootstrap --variant={VARIANT} {SUITE} from {mirror}")
        _check_call(["debootstrap", f"--variant={VARIANT}", SUITE, str(rootfs), mirror], progress)
        # debootstrap lists the suite alone; the image build should see security fixes too.
        (rootfs / "etc/apt/sources.list").write_text(render_sources(SUITE, mirror, security))
        _pack(rootfs, tarball, progress)


def _pack(rootfs: Path, tarball: Path, progress: Progress) -> None:
    partial = rootfs.with_suffix(".tar")
    # The downloaded .debs are installed already; the image need not carry them.
    exclude = "--exclude=./var/cache/apt/archives/*.deb"
    argv = ["tar", "--numeric-owner", exclude, "-C", str(rootfs), "-cf", str(partial), "."]
    _check_call(argv, progress)
    for stale in tarball.parent.glob("*.tar"):
        stale.unlink()
    shutil.move(partial, tarball)


def _check_call(argv: list[str], progress: Progress) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines()[-5:]:
        progress(line)
    if done.returncode != 0:
        raise SandboxError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def _build(tag: str, dockerfile: Path, build_args: dict[str, str], progress: Progress) -> None:
    # Host networking because the engine may run without a bridge; the build is the only step
    # that reaches a package mirror.
    with engine_errors(f"build {tag}"):
        stream = client().api.build(
            fileobj=_context(dockerfile),
            custom_context=True,
            tag=tag,
            buildargs=build_args,
            network_mode="host",
            rm=True,
            forcerm=True,
            decode=True,
        )
        _follow(stream, progress)


def _follow(stream: Iterable[dict[str, Any]], progress: Progress) -> None:
    for chunk in stream:
        if "error" in chunk:
            raise SandboxError(f"image build failed: {chunk['error'].strip()}")
        if line := str(chunk.get("stream", "")).rstrip():
            progress(line)


def _context(dockerfile: Path) -> io.BytesIO:
    # The context holds the Dockerfile alone, so the hash covers everything the build sees.
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(dockerfile, arcname="Dockerfile")
    buffer.seek(0)
    return buffer


def _image_exists(tag: str) -> bool:
    with engine_errors("inspect image"):
        return bool(client().api.images(name=tag, quiet=True))


def _base_inputs() -> bytes:
    # Describes the base's recipe; change it whenever _debootstrap changes what it produces.
    return f"debootstrap --variant={VARIANT} {SUITE}; sources: updates, security; no .debs".encode()


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big") + part)
    return hasher.hexdigest()[:12]
