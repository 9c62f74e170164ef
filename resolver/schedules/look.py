"""What a scheduled run finds before it works, on a private clone of the repository (host-side
git on data only, and the sandbox for the test command; nothing from the repository runs on
the host)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from resolver.agent import git as git_repo
from resolver.agent.egress import job_egress
from resolver.agent.git import Clone
from resolver.agent.sandboxes import claim_sandbox, policy_from_settings
from resolver.agent.workspace import egress_plan, load_repository
from resolver.core.job import JobContext
from resolver.schedules.prompts import Manifests, parse_manifests
from sandbox import ExecResult, run_setup, setup_failure
from sandbox.policy import WORKDIR

TEST_CONFIG_KEY: Final = "test_command"


@contextmanager
def scratch_clone(root: Path, url: str, env: dict[str, str] | None) -> Iterator[Clone]:
    """A private full clone (every branch as `origin/…`) under `root`, removed after."""
    with git_repo.private_clone(url, root, None, env) as clone:
        yield clone


def manifests(clone: Clone, ref: str) -> Manifests:
    return parse_manifests(git_repo.git(clone, "ls-tree", "-r", ref))


def others_pushed(clone: Clone, ref: str, branch: str, bot_email: str) -> bool:
    """Whether a commit on `branch` (and not on `ref`) was authored or committed by anyone but
    the bot: a person pushed to it, or merged into it from the forge's web page."""
    emails = git_repo.git(clone, "log", "--format=%ae%n%ce", f"{ref}..origin/{branch}")
    return any(line.strip() and line.strip() != bot_email for line in emails.splitlines())


def was_merged(clone: Clone, ref: str, head: str | None) -> bool:
    """Whether the bot's last pushed commit reached `ref`: merged, rebased or squashed. A commit
    the clone no longer has (its branch deleted) counts as merged: unsure, never block."""
    if not head or not _succeeds(clone, "cat-file", "-e", f"{head}^{{commit}}"):
        return True
    if _succeeds(clone, "merge-base", "--is-ancestor", head, ref):
        return True
    base = git_repo.git(clone, "merge-base", head, ref).strip()
    changed = git_repo.git(clone, "diff", "--name-only", base, head).split()
    # Squashed: every file the branch changed reads on `ref` as on the branch.
    return not changed or _succeeds(clone, "diff", "--quiet", head, ref, "--", *changed)


def _succeeds(clone: Clone, *args: str) -> bool:
    try:
        git_repo.git(clone, *args)
    except git_repo.RepoError:
        return False
    return True


def find_test_command(clone: Clone, ref: str, configured: str | None) -> str | None:
    """The schedule's test command, else `test_command` in the default branch's config."""
    if configured:
        return configured
    value = git_repo.repo_config(clone, ref).get(TEST_CONFIG_KEY)
    return value if isinstance(value, str) and value.strip() else None


def run_tests(
    job_id: int, clone: Clone, ref: str, checkout: str | None, command: str, ctx: JobContext
) -> tuple[ExecResult, str | None]:
    """Run the repository's setup, then `command`, in a sandbox on a copy of the clone, checked
    out at `checkout` (default: HEAD). Returns the test run and the setup's failure (the tests
    did not run) if any."""
    settings = ctx.settings
    setup = git_repo.read_setup(clone, ref)
    policy = policy_from_settings(settings)
    network = setup.network if setup else None
    egress = job_egress(settings, git_repo.repo_config(clone, ref), network)
    plan = egress_plan(egress, setup is not None)
    with claim_sandbox(str(job_id), policy, ctx.owner, plan) as sandbox:
        load_repository(sandbox, clone, policy, settings.sandbox_setup_timeout, checkout)
        ctx.on_cancel.append(sandbox.interrupt)
        try:
            if setup is not None:
                done = run_setup(sandbox, setup.script, settings.sandbox_setup_timeout)
                failure = setup_failure(done)
                if failure is not None:
                    return done, failure
                if plan is not None and egress.agent != egress.setup:
                    sandbox.allow(egress.agent)
            timeout = float(settings.sandbox_command_timeout)
            return sandbox.run(command, timeout=timeout, cwd=WORKDIR), None
        finally:
            ctx.on_cancel.remove(sandbox.interrupt)
