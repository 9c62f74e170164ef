"""A schedule end to end on Azure DevOps, with the stack, a real worker and the beat: a missed
Monday slot fires once, its run pushes to the real bare remote and opens one draft pull request
through the stand-in; the next run with a change moves the same branch and keeps that one pull
request, its description brought up to date."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.standin.git_http import GitHttpServer, branch_head, run_git
from resolver.core.settings import get_settings
from resolver.schedules import queue
from resolver.schedules.asked import run_now
from resolver.schedules.store import repository
from resolver.store.db import session_scope
from resolver.store.models import ScheduleRepo
from tests.conftest import ResolverEnv
from tests.e2e.stack import by_step, fix_script, running_stack
from tests.e2e.test_schedules import docstring_edit, finished_runs
from tests.integrations.azuredevops.flow import (
    BOT,
    BOT_TOKEN,
    REPO,
    azure_git,
    azure_standin,
    settings,
    widgets,
)
from tests.schedules.helpers import make_schedule
from tests.support.llm_server import finish

__all__ = ["azure_git", "azure_standin"]
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]
LONG_AGO = datetime(2024, 1, 1, tzinfo=UTC)
BRANCH = "resolver/schedule-tidy"
SPEC = f"azuredevops:{REPO}"


def test_a_schedule_opens_one_draft_pull_request_and_its_next_run_updates_it(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    azure_standin: AzureDevOpsAPI,
    azure_git: GitHttpServer,
) -> None:
    api = azure_standin
    _, bare = widgets(api, azure_git)
    tidy = make_schedule("tidy", SPEC, created_at=LONG_AGO, prompt="Fix add() so tests pass.")
    with session_scope() as session:
        repository(session, SPEC)
        session.execute(update(ScheduleRepo).values(runs_per_hour=20))
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.llm.set_script(by_step(fix_script()))
        stack.start_worker()
        stack.start_beat()

        # The missed Monday slot fires: one push to the bare remote, one draft pull request.
        [first] = finished_runs(stack, tidy, 1)
        stack.wait_callbacks_settled()
        first = stack.job(first.id)
        assert (first.outcome, first.result["schedule"]["action"]) == ("changed_code", "propose")
        [pull] = api.pulls
        assert (pull.source, pull.target, pull.is_draft) == (
            f"refs/heads/{BRANCH}",
            "refs/heads/main",
            True,
        )
        assert pull.title == "tidy: Fix add() so tests pass."
        assert pull.created_by == api.add_person(BOT).id
        assert first.pr_url == f"{api.url}/Widgets/_git/widgets/pullrequest/{pull.id}"
        assert "+    return a + b" in run_git("--git-dir", str(bare), "diff", "main", BRANCH)
        pushed = branch_head(bare, BRANCH)

        # Run again by hand with something new: the same branch moves on, the same PR stays.
        stack.llm.set_script(by_step([docstring_edit(), finish("changed_code", "Documented.")]))
        run_now("tidy", SPEC, queue.MANUAL, "test", get_settings())
        second = finished_runs(stack, tidy, 2)[1]
        stack.wait_callbacks_settled()
        logs = stack.logs()

    assert (second.outcome, second.result["schedule"]["action"]) == ("changed_code", "update")
    assert second.pr_url == first.pr_url and len(api.pulls) == 1
    assert branch_head(bare, BRANCH) != pushed
    authors = run_git("--git-dir", str(bare), "log", "--format=%an", f"main..{BRANCH}")
    assert authors.split() == ["resolver", "resolver"]
    assert '"""Add two numbers."""' in run_git("--git-dir", str(bare), "show", f"{BRANCH}:calc.py")
    assert BOT_TOKEN not in logs
