"""Red CI on the bot's own pull request: before a fix job runs, the repository's opt-in (from
its default branch), the branch's head (still the failing commit, still the bot's) and the
attempt bound (in the store); then what the forge says about the failing check."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

from integrations import registry
from resolver.agent import git as git_repo
from resolver.contract.errors import CallbackError
from resolver.contract.outbound import Comment
from resolver.contract.provider import CIReport
from resolver.contract.triggers import FailedCheck
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.core.states import Outcome
from resolver.features.ci.contract import (
    CIConfig,
    CIConfigError,
    HeadCommit,
    over_attempts_note,
    parse_ci_config,
    report_comments,
    why_not_fix,
)
from resolver.store import bot_pulls, ci_attempts
from resolver.store.db import session_scope
from resolver.worker.push import bot_identity
from resolver.worker.values import Plan, Snapshot, Stop

logger = logging.getLogger(__name__)

_HEAD_FORMAT: Final = "--format=%H%x00%ae%x00%ce"


class QuietStop(Exception):
    """A red check the bot leaves alone without a word (not opted in, stale, bound reached)."""


def check_fix(
    settings: Settings,
    snapshot: Snapshot,
    plan: Plan,
    check: FailedCheck,
    git_env: dict[str, str] | None,
) -> tuple[int, int, tuple[Comment, ...]]:
    """The attempt number, its bound and the check's output as context; QuietStop or Stop when
    the fix must not run."""
    root = settings.sandbox_workspace_root
    config = _config(plan, git_env, root)
    head = _head(plan, git_env, root)
    bot_email = bot_identity(settings.bot_name)[1]
    why = why_not_fix(config, check, head, bot_email)
    if why is not None and not why[1]:
        raise QuietStop(why[0])
    with session_scope() as session:
        repo = plan.repo.full_name
        attempt = ci_attempts.claim_attempt(
            session, plan.forge_name, repo, check.head_sha, config.max_attempts
        )
    if attempt is None:
        raise QuietStop(over_attempts_note(check, config.max_attempts))
    if why is not None:
        raise Stop(Outcome.REFUSED, why[0])
    return (
        attempt,
        config.max_attempts,
        report_comments(check, _report(snapshot, plan, check, settings)),
    )


def _config(plan: Plan, git_env: dict[str, str] | None, root: Path) -> CIConfig:
    """`ci` from `.resolver/config.yml` on the default branch, read through the existing helper."""
    with git_repo.private_clone(plan.repo.clone_url, root, None, git_env, shallow=True) as clone:
        ref = git_repo.default_ref(clone)
        try:
            config = parse_ci_config(git_repo.repo_config(clone, ref))
            sha = git_repo.git(clone, "rev-parse", ref).strip()
        except (CIConfigError, git_repo.RepoError) as error:
            raise Stop(Outcome.COULD_NOT, f"I cannot fix the failing check: {error}") from None
    # What intake decides the next red check on (`ingress.concerns`).
    with session_scope() as session:
        bot_pulls.remember_option(
            session, plan.forge_name, plan.repo.full_name, sha, "ci", config.fix
        )
    return config


def _head(plan: Plan, git_env: dict[str, str] | None, root: Path) -> HeadCommit:
    """The pull request branch's newest commit: its id and who wrote and committed it. Only
    git's own records are read; nothing of the tree."""
    with git_repo.private_clone(
        plan.repo.clone_url, root, plan.branch, git_env, shallow=True
    ) as clone:
        sha, author, committer = (
            git_repo.git(clone, "log", "-1", _HEAD_FORMAT, "HEAD").strip().split("\0")
        )
    return HeadCommit(sha, author, committer)


def _report(snapshot: Snapshot, plan: Plan, check: FailedCheck, settings: Settings) -> CIReport:
    reader = registry.get(plan.forge_name).ci_report
    if reader is None:
        return CIReport()
    try:
        return reader(snapshot.trigger, snapshot.requester_id, check, settings)
    except CallbackError as error:
        # The fix can still start from the check's name and summary.
        log(logger, logging.WARNING, "job.ci_report_unavailable", job=snapshot.id, error=str(error))
        return CIReport(unavailable=(f"the check's details could not be read: {error}",))
