"""Schedules end to end on the GitHub stand-in, with a real worker and two real beat processes.

One schedule's life: its missed Monday run is caught up once (two beats tick) and opens a
pull request; the next run with nothing new posts nothing; `@resolver run tidy` on the
repository updates the same branch; once a person pushes to that branch the bot stops, says so
once on the pull request, and pushes nothing; closed unmerged, the pull request is not proposed
again until the schedule's prompt changes. A dry-run schedule beside it pushes nothing and
keeps the diff it would have proposed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, branch_head, create_bare_repo, run_git
from resolver.core.settings import get_settings
from resolver.schedules import queue
from resolver.schedules.asked import run_now
from resolver.schedules.history import history
from resolver.schedules.store import find_schedule, repository
from resolver.store.db import session_scope
from resolver.store.models import Job, Schedule, ScheduleRepo
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment, widgets
from tests.e2e.stack import REPO_FILES, Stack, by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.integrations.github.conftest import INSTALLATION_ID, REPO
from tests.schedules.helpers import make_schedule, runs_of
from tests.support.llm_server import finish, tool
from tests.support.procs import start

pytestmark = pytest.mark.timeout(600)

LONG_AGO = datetime(2024, 1, 1, tzinfo=UTC)
BRANCH = "resolver/schedule-tidy"
DOCSTRING = '    """Add two numbers."""\n'
HUMAN = ("-c", "user.name=Dana", "-c", "user.email=dana@example.test")


def second_beat(stack: Stack) -> None:
    """Another beat process against the same database and Redis, with its own schedule file."""
    args = ["-m", "celery", "-A", "resolver.tasks:app", "beat"]
    args += ["-s", str(stack.tmp / "beat-schedule-2"), "--pidfile=", "--loglevel", "INFO"]
    stack.procs.append(start(stack.child_env(), stack.tmp / "beat-2.log", *args))


def finished_runs(stack: Stack, schedule_id: int, count: int) -> list[Job]:
    """Wait for the schedule's first `count` runs to finish; their jobs."""

    def done() -> bool:
        runs = runs_of(schedule_id)
        return len(runs) >= count and all(
            r.job_id is not None and stack.job(r.job_id).finished_at is not None
            for r in runs[:count]
        )

    stack.wait(done, 240, f"{count} runs of schedule {schedule_id}")
    return [stack.job(r.job_id) for r in runs_of(schedule_id)[:count] if r.job_id is not None]


def bot_comments(api: GitHubAPI, number: int) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number]


def human_push(bare: Path, tmp: Path) -> str:
    work = tmp / "dana"
    run_git("clone", "-q", "--branch", BRANCH, str(bare), str(work))
    (work / "NOTES.md").write_text("Dana's notes\n")
    run_git("add", "-A", cwd=work)
    run_git(*HUMAN, "commit", "-q", "-m", "Dana's change", cwd=work)
    run_git("push", "-q", "origin", BRANCH, cwd=work)
    return run_git("rev-parse", "HEAD", cwd=work).strip()


def test_a_schedule_keeps_one_pull_request_until_a_person_takes_it_over(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    tidy = make_schedule("tidy", REPO, created_at=LONG_AGO, prompt="Fix add() so tests pass.")
    preview = make_schedule("preview", REPO, created_at=LONG_AGO, dry_run=True)
    with session_scope() as session:
        repository(session, REPO, installation_id=INSTALLATION_ID)
        session.execute(update(ScheduleRepo).values(concurrent_runs=2, runs_per_hour=20))
    settings = github_settings(github_api, key_file)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(fix_script()))
        stack.start_worker()
        stack.start_beat()
        second_beat(stack)

        # 1. The missed Monday slot runs once, though two beats tick: one pull request.
        [first] = finished_runs(stack, tidy, 1)
        [dry] = finished_runs(stack, preview, 1)
        stack.wait_callbacks_settled()
        first = stack.job(first.id)  # its pull request's URL is noted when the PR is opened
        assert (first.outcome, first.result["schedule"]["action"]) == ("changed_code", "propose")
        [pull] = github_api.pulls
        assert (pull.head, pull.title, pull.draft) == (
            BRANCH,
            "tidy: Fix add() so tests pass.",
            True,
        )
        assert first.pr_url == pull_url(github_api, pull.number)
        assert "+    return a + b" in run_git("--git-dir", str(bare), "diff", "main", BRANCH)
        # The dry run kept its diff and pushed nothing.
        assert dry.result["schedule"]["action"] == "dry_run"
        assert "+    return a + b" in dry.result["schedule"]["diff"]
        assert branch_head(bare, "resolver/schedule-preview") is None and dry.branch is None
        pushed = branch_head(bare, BRANCH)

        # 2. Nothing new: nothing pushed, nothing posted.
        stack.llm.set_script(by_step([finish("answered", "add() already adds.")]))
        run_now("tidy", REPO, queue.MANUAL, "test", get_settings())
        second = finished_runs(stack, tidy, 2)[1]
        assert (second.state, second.result["schedule"]["action"]) == ("succeeded", "update")
        assert branch_head(bare, BRANCH) == pushed and len(github_api.pulls) == 1
        assert github_api.comments == {} and stack.callbacks(second.id) == []

        # 3. `@resolver run tidy` on the repository: the open pull request's branch moves on.
        stack.llm.set_script(by_step([docstring_edit(), finish("changed_code", "Documented.")]))
        client = ingress(stack, monkeypatch)
        asked = issue_comment(github_api, git_server, "@resolver run tidy")
        command_job = int(post(client, github("issue_comment.created", asked)).json()["job_id"])
        third = finished_runs(stack, tidy, 3)[2]
        stack.wait_finished(command_job)
        stack.wait_callbacks_settled()
        assert (third.outcome, third.result["schedule"]["action"]) == ("changed_code", "update")
        assert third.pr_url == first.pr_url and len(github_api.pulls) == 1
        log = run_git("--git-dir", str(bare), "log", "--format=%an", f"main..{BRANCH}")
        assert log.split() == ["resolver", "resolver"]
        assert DOCSTRING in run_git("--git-dir", str(bare), "show", f"{BRANCH}:calc.py")
        [reply] = bot_comments(github_api, 7)
        assert reply.startswith("Started a run of schedule `tidy`")

        # 4. A person pushes to the branch: the bot leaves it alone, and says so once.
        dana = human_push(bare, tmp_path)
        asked_llm = len(stack.llm.requests)
        for count in (4, 5):
            run_now("tidy", REPO, queue.MANUAL, "test", get_settings())
            skipped = finished_runs(stack, tidy, count)[-1]
            assert skipped.result["schedule"]["action"] == "skipped_edited"
        stack.wait_callbacks_settled()
        assert len(stack.llm.requests) == asked_llm  # no agent ran
        assert branch_head(bare, BRANCH) == dana
        [note] = bot_comments(github_api, pull.number)
        assert "Someone else has pushed to `resolver/schedule-tidy`" in note

        # 5. Closed without merging: not proposed again until the schedule's inputs change.
        pull.state = "closed"
        run_now("tidy", REPO, queue.MANUAL, "test", get_settings())
        declined = finished_runs(stack, tidy, 6)[-1]
        assert declined.result["schedule"]["action"] == "skipped_declined"
        assert len(stack.llm.requests) == asked_llm
        with session_scope() as session:
            session.execute(update(Schedule).where(Schedule.id == tidy).values(prompt="Fix add()."))
        stack.llm.set_script(by_step(fix_script()))
        run_now("tidy", REPO, queue.MANUAL, "test", get_settings())
        again = finished_runs(stack, tidy, 7)[-1]
        stack.wait_callbacks_settled()
        assert (again.outcome, again.result["schedule"]["action"]) == ("changed_code", "propose")
        renewed = github_api.pulls[-1]
        assert len(github_api.pulls) == 2 and renewed.head == f"{BRANCH}-{again.id}"
        assert branch_head(bare, BRANCH) == dana  # Dana's branch is left as she left it
        logs = stack.logs()
        beats = [(tmp_path / name).read_text() for name in ("beat.log", "beat-2.log")]

    assert all("Sending due task schedules-tick" in beat for beat in beats)

    with session_scope() as session:
        did = [run.did for run in reversed(history(session, find_schedule(session, "tidy")))]
    assert did == [
        "opened a pull request",
        "no changes",
        "updated its pull request",
        "skipped: someone else pushed to its pull request's branch",
        "skipped: someone else pushed to its pull request's branch",
        "skipped: its pull request was closed unmerged; nothing changed since",
        "opened a pull request",
    ]
    reasons = [r.reason for r in runs_of(tidy)]
    assert reasons == ["cron", "manual", "comment", "manual", "manual", "manual", "manual"]
    assert not any(token in logs for token in github_api.minted)


def pull_url(api: GitHubAPI, number: int) -> str:
    return f"{api.web_url}/{REPO}/pull/{number}"


def docstring_edit() -> object:
    return tool(
        "str_replace_editor",
        command="str_replace",
        path="calc.py",
        old_str="def add(a, b):\n",
        new_str="def add(a, b):\n" + DOCSTRING,
    )


def test_fix_default_branch_acts_only_while_the_tests_fail(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    config = {".resolver/config.yml": "test_command: python3 -m unittest -q\n"}
    bare = create_bare_repo(git_server.root, REPO, {**REPO_FILES, **config})
    github_api.add_repo(REPO, git_server.url_for(REPO), bare=bare)
    nightly = make_schedule("nightly", REPO, task="fix-default-branch", prompt=None)
    with session_scope() as session:
        repository(session, REPO, installation_id=INSTALLATION_ID)
        session.execute(update(ScheduleRepo).values(runs_per_hour=20))
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.llm.set_script(by_step(fix_script()))
        stack.start_worker()

        # The tests fail on main: the agent is shown the failure and fixes it in one PR.
        run_now("nightly", REPO, queue.MANUAL, "test", get_settings())
        [fixed] = finished_runs(stack, nightly, 1)
        stack.wait_callbacks_settled()
        assert (fixed.outcome, fixed.result["schedule"]["action"]) == ("changed_code", "propose")
        [pull] = github_api.pulls
        assert pull.title == "nightly: fix the default branch"
        first_prompt = str(stack.llm.requests[0]["messages"])
        assert "python3 -m unittest -q" in first_prompt and "AssertionError" in first_prompt

        # Merged: the tests pass on main, so the next run changes nothing and asks no model.
        run_git("--git-dir", str(bare), "update-ref", "refs/heads/main", pull.head)
        pull.state = "closed"
        asked = len(stack.llm.requests)
        run_now("nightly", REPO, queue.MANUAL, "test", get_settings())
        passed = finished_runs(stack, nightly, 2)[1]

    assert (passed.outcome, passed.result["schedule"]["action"]) == ("no_changes", "tests_pass")
    assert len(stack.llm.requests) == asked and len(github_api.pulls) == 1
    with session_scope() as session:
        schedule = find_schedule(session, "nightly")
        assert (schedule.pull_state, schedule.pull_branch) == (None, None)  # merged: forgotten
        [latest, _] = history(session, schedule)
    assert latest.did == "skipped: the tests pass"
