"""Git on the host: the job's private clone, read and written as data.

The host clones into a private root that no sandbox mounts, never checks out a work tree, and
never runs git on anything the agent wrote: the sandbox gets a copy of the clone's `.git`, and
the agent's change comes back as checked data (`sandbox.Change`) that becomes blobs, a tree
and a commit here through plumbing.

Every git run is hardened (hardened.py). A token reaches only the clone, the remote-branch check
and the push, which read nothing the agent wrote.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final
from urllib.parse import urlsplit

from resolver.agent.hardened import RepoError, protocol_of, run_git
from resolver.core import tracing
from resolver.core.yamlfile import RepoYamlError, load_yaml
from sandbox import Change, RepoSetup, parse_repo_config

__all__ = ["RepoError"]  # the error of every step here

CONFIG_PATH: Final = ".resolver/config.yml"
SETUP_PATH: Final = ".resolver/setup.sh"
# A file read from the default branch (instructions, config, setup) is small or ignored.
MAX_SHOWN_BYTES: Final = 1_000_000
MAX_DIFF_BYTES: Final = 200_000
ZERO_SHA: Final = "0" * 40
# A tree entry's mode: regular and executable files are read; a symlink (120000) never is.
REGULAR_MODES: Final = frozenset({"100644", "100755"})
_ENTRY: Final = "%(objectmode) %(objectname)%x09%(path)"


@dataclass(frozen=True)
class Clone:
    """A private clone without a work tree: `path` holds only `.git`."""

    path: Path
    source: str
    """Where it came from (a URL or a local path): the only remote it ever talks to."""

    @property
    def git_dir(self) -> Path:
        return self.path / ".git"

    @property
    def protocol(self) -> str:
        return protocol_of(self.source)


def private_root(root: Path) -> Path:
    """The clones' root, created private to this user (mode 700); refused if others can enter."""
    root = root.expanduser().resolve()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.stat()
    if info.st_uid != os.getuid():
        raise RepoError(f"the workspace root {root} belongs to another user")
    if info.st_mode & 0o077:
        root.chmod(0o700)
    return root


@contextmanager
def private_clone(
    source: str,
    root: Path,
    branch: str | None = None,
    auth: Mapping[str, str] | None = None,
    *,
    shallow: bool = False,
) -> Iterator[Clone]:
    """A fresh clone of `source` (every branch as `origin/…`, HEAD on `branch` or the default)
    under a random name in `root`, removed afterwards."""
    path = private_root(root) / f"clone-{secrets.token_hex(8)}"
    try:
        with tracing.span("git.clone", shallow=shallow):
            made = clone(source, path, branch, auth, shallow=shallow)
        yield made
    finally:
        shutil.rmtree(path, ignore_errors=True)


def clone(
    source: str,
    dest: Path,
    branch: str | None = None,
    auth: Mapping[str, str] | None = None,
    *,
    shallow: bool = False,
) -> Clone:
    """Clone `source` into `dest` without checking anything out (`shallow`: the newest commit
    only). `auth` (`Forge.git_env`) is for this one command; nothing of it is written to disk."""
    local = Path(source).expanduser()
    origin = str(local.resolve()) if not urlsplit(source).scheme and local.exists() else source
    target = Clone(dest, origin)
    extra = ["--branch", branch] if branch else []
    extra += ["--depth", "1"] if shallow else []
    dest.parent.mkdir(parents=True, exist_ok=True)
    argv = ["clone", "--quiet", "--no-checkout", "--no-hardlinks", "--template=", *extra]
    run_git(target.protocol, [*argv, "--", origin, str(dest)], auth=auth, cwd=dest.parent)
    return target


def detach_at(
    clone: Clone,
    ref: str,
    auth: Mapping[str, str] | None = None,
    *,
    source: str | None = None,
    commit: str | None = None,
) -> str:
    """Fetch `ref` from origin, or from `source` on origin's host (a ref no branch of origin
    names, such as the head a forge keeps of a pull request from a fork, or the fork's own
    branch) and point HEAD at its commit, or at `commit` when the ref reaches it; that commit."""
    if not ref.startswith("refs/") or ".." in ref or ref.endswith("/"):
        raise RepoError(f"not a ref to fetch: {ref!r}")
    if source is not None and _host_of(source) != _host_of(clone.source):
        raise RepoError("a pull request's head is fetched only from its forge's own host")
    remote = "origin" if source is None else source
    git(clone, "fetch", "--quiet", "--no-tags", remote, "--", ref, auth=auth)
    fetched = git(clone, "rev-parse", "--verify", "FETCH_HEAD^{commit}").strip()
    if commit is not None and not (_is_sha(commit) and is_ancestor(clone, commit, fetched)):
        raise RepoError(f"{ref} does not hold the pull request's head {commit[:40]!r}")
    head = fetched if commit is None else git(clone, "rev-parse", f"{commit}^{{commit}}").strip()
    git(clone, "update-ref", "--no-deref", "HEAD", head)
    return head


def _host_of(url: str) -> tuple[str, str]:
    """A URL's scheme and host (without the user part)."""
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.rpartition("@")[2]


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def git(
    clone: Clone,
    *args: str,
    auth: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> str:
    """Run hardened git on the clone's `.git` and return its output as text."""
    return raw(clone, *args, auth=auth, env=env, stdin=stdin).decode(errors="replace")


def raw(clone: Clone, *args: str, limit: int | None = None, **options: Any) -> bytes:
    """Run hardened git on the clone's `.git` and return its output as bytes."""
    argv = ["--git-dir", str(clone.git_dir), *args]
    return run_git(clone.protocol, argv, cwd=clone.path.parent, limit=limit, **options)


def head(clone: Clone) -> str:
    """The commit the clone's HEAD names: the base of the job's work."""
    return git(clone, "rev-parse", "--verify", "HEAD^{commit}").strip()


def default_ref(clone: Clone) -> str:
    """`origin/<default branch>`, or HEAD for a clone whose origin names no default."""
    try:
        return git(clone, "rev-parse", "--abbrev-ref", "origin/HEAD").strip()
    except RepoError:
        return "HEAD"


def regular_files(clone: Clone, ref: str, paths: Iterable[str]) -> dict[str, str]:
    """The blob ids of those `paths` that are regular files at `ref` (a symlink, mode 120000,
    is never followed, and a submodule or folder is not a file)."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    listed = raw(clone, "ls-tree", "-z", f"--format={_ENTRY}", ref, "--", *wanted)
    found = {}
    for entry in listed.decode(errors="replace").split("\0"):
        info, _, path = entry.partition("\t")
        mode, _, blob = info.partition(" ")
        if mode in REGULAR_MODES and path in wanted:
            found[path] = blob
    return found


def read_blob(clone: Clone, blob: str, limit: int = MAX_SHOWN_BYTES) -> str | None:
    """A blob's text; None when it is larger than `limit`."""
    if int(git(clone, "cat-file", "-s", blob).strip()) > limit:
        return None
    return git(clone, "cat-file", "blob", blob)


def show(clone: Clone, ref: str, path: str) -> str | None:
    """The file's text at `ref`; None when the tree has no such regular file (or it is too
    large)."""
    blob = regular_files(clone, ref, [path]).get(path)
    return None if blob is None else read_blob(clone, blob)


def changed_paths(clone: Clone, since: str, until: str) -> list[str]:
    """The paths that differ between `since` and `until`: names as data, never opened."""
    out = raw(
        clone, "diff", "--no-renames", "--name-only", "-z", since, until, limit=MAX_DIFF_BYTES
    )
    return [name for name in out.decode(errors="replace").split("\0") if name]


def diff_stat(clone: Clone, since: str, until: str) -> list[tuple[str, int | None, int | None]]:
    """Each changed path with its added and removed lines (None for a binary file)."""
    argv = ["diff", "--no-renames", "--no-ext-diff", "--no-textconv", "--numstat", "-z"]
    out = raw(clone, *argv, since, until, limit=MAX_DIFF_BYTES).decode(errors="replace")
    stats = []
    for entry in out.split("\0"):
        added, _, rest = entry.partition("\t")
        removed, _, path = rest.partition("\t")
        if path:
            stats.append((path, _count(added), _count(removed)))
    return stats


def merge_base(clone: Clone, one: str, other: str) -> str | None:
    """The newest commit both have; None when they share none (or a ref is missing)."""
    try:
        return git(clone, "merge-base", one, other).strip() or None
    except RepoError:
        return None


def _count(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def repo_config(clone: Clone, ref: str) -> dict[str, Any]:
    """`.resolver/config.yml` from `ref` as a mapping ({} when absent)."""
    text = show(clone, ref, CONFIG_PATH)
    if text is None:
        return {}
    try:
        data = load_yaml(text, CONFIG_PATH)
    except RepoYamlError as error:
        raise RepoError(str(error)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RepoError(f"{CONFIG_PATH} must be a mapping")
    return data


def read_setup(clone: Clone, ref: str) -> RepoSetup | None:
    """The setup step at `ref` (the default branch); None without a script."""
    script = show(clone, ref, SETUP_PATH)
    if script is None:
        return None
    config = show(clone, ref, CONFIG_PATH)
    return RepoSetup(script=script, network=parse_repo_config(config) if config else False)


def pack_for_sandbox(clone: Clone, out: IO[bytes], uid: int) -> None:
    """A tar of the clone's `.git`, owned by the sandbox user, for the sandbox's own copy."""

    def owned(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.uid = member.gid = uid
        member.uname = member.gname = ""
        return member

    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        archive.add(clone.git_dir, arcname=".git", filter=owned)


def base_listing(clone: Clone, commit: str) -> bytes:
    """`git ls-tree -r -z` of the commit: what the exporter compares the work tree with."""
    return raw(clone, "ls-tree", "-r", "-z", "--full-tree", commit)


def apply_change(clone: Clone, base: str, change: Change) -> str | None:
    """Write the change onto `base` as a new tree (blobs through `hash-object --no-filters`,
    paths through `update-index --index-info`); None when the tree is the base's own."""
    with tempfile.TemporaryDirectory(dir=clone.path) as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(clone, "read-tree", base, env=env)
        shas = _hash_blobs(clone, Path(scratch), [changed.data for changed in change.files])
        entries = [f"0 {ZERO_SHA}\t{path}".encode() for path in change.deleted]
        entries += [
            f"{changed.mode} {sha}\t{changed.path}".encode()
            for changed, sha in zip(change.files, shas, strict=True)
        ]
        index_info = b"".join(entry + b"\0" for entry in entries)
        git(clone, "update-index", "-z", "--replace", "--index-info", env=env, stdin=index_info)
        tree = git(clone, "write-tree", env=env).strip()
    base_tree = git(clone, "rev-parse", f"{base}^{{tree}}").strip()
    return None if tree == base_tree else tree


def diff(clone: Clone, base: str, tree: str | None) -> str:
    """The change as a patch, cut at MAX_DIFF_BYTES; "" when there is none."""
    if tree is None:
        return ""
    argv = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--binary", base, tree]
    out = raw(clone, *argv, limit=MAX_DIFF_BYTES)
    text = out.decode(errors="replace")
    if len(out) >= MAX_DIFF_BYTES:
        text += f"\n[... the diff is longer than {MAX_DIFF_BYTES} bytes; the rest is cut ...]\n"
    return text


def commit(clone: Clone, tree: str, parent: str, message: str, identity: tuple[str, str]) -> str:
    """A commit of `tree` on `parent`, authored and committed by `identity` (name, email)."""
    env = identity_env(identity)
    return git(clone, "commit-tree", tree, "-p", parent, env=env, stdin=message.encode()).strip()


def identity_env(identity: tuple[str, str]) -> dict[str, str]:
    """The environment that makes git author and commit as `identity` (name, email)."""
    name, email = identity
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def push(
    clone: Clone, sha: str, branch: str, *, force: bool, auth: Mapping[str, str] | None
) -> None:
    """Push `sha` to `branch` of the clone's own source URL, and nowhere else."""
    flags = ["--force"] if force else []
    git(clone, "push", "--quiet", *flags, clone.source, f"{sha}:refs/heads/{branch}", auth=auth)


def push_over(
    clone: Clone, sha: str, branch: str, *, expected: str, auth: Mapping[str, str] | None
) -> None:
    """Force `sha` onto `branch` of the clone's source only while the branch is at `expected`
    (a lease): a commit pushed there since is never overwritten, and the push fails."""
    lease = f"--force-with-lease=refs/heads/{branch}:{expected}"
    git(clone, "push", "--quiet", lease, clone.source, f"{sha}:refs/heads/{branch}", auth=auth)


def remote_head(clone: Clone, branch: str) -> str | None:
    """The commit `origin/<branch>` named when the clone was made, or None without one."""
    try:
        return git(
            clone, "rev-parse", "--verify", f"refs/remotes/origin/{branch}^{{commit}}"
        ).strip()
    except RepoError:
        return None


def remote_branch_exists(clone: Clone, branch: str, auth: Mapping[str, str] | None) -> bool:
    """Whether the source has `branch` now (asked over the network, not from the clone's refs)."""
    out = git(clone, "ls-remote", "--heads", clone.source, f"refs/heads/{branch}", auth=auth)
    return bool(out.strip())


def _hash_blobs(clone: Clone, scratch: Path, contents: list[bytes]) -> list[str]:
    """Blob ids for the contents, written from files this process creates (never the agent's)."""
    if not contents:
        return []
    names = []
    for number, data in enumerate(contents):
        path = scratch / f"blob-{number}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        names.append(str(path))
    listing = "\n".join(names).encode() + b"\n"
    out = git(clone, "hash-object", "-w", "--no-filters", "--stdin-paths", stdin=listing)
    return out.split()


def is_ancestor(clone: Clone, older: str, newer: str) -> bool:
    """Whether `older` is already part of `newer`'s history (False, too, for a missing ref)."""
    try:
        git(clone, "merge-base", "--is-ancestor", older, newer)
    except RepoError:
        return False
    return True
