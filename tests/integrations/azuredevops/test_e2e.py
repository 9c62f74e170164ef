"""End to end on Azure DevOps, with the stack and the scripted model the other forges' tests
use: a mention on a work item (Azure Boards) with the hook's basic auth, from someone who may
contribute, ends in one draft pull request on a real bare git remote (Azure Repos) and one
status comment edited in place; a mention in that pull request's thread continues its branch;
a stranger's mention is refused before the agent runs; bad basic auth is a 401 and no job."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.standin.git_http import GitHttpServer, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.stack import SUMMARY, Stack, fix_script, ingress, running_stack
from tests.integrations.azuredevops.flow import (
    BOT,
    BOT_TOKEN,
    REPO,
    STATUS_EDIT,
    azure_git,
    azure_standin,
    delivery,
    pull_comment,
    settings,
    widgets,
    work_item_mention,
)
from tests.integrations.deliveries import Delivery, post
from tests.support.llm_server import finish, tool

__all__ = ["azure_git", "azure_standin"]
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
ASK = "@resolver please fix add() repo=Widgets/widgets"


def run(stack: Stack, monkeypatch: pytest.MonkeyPatch, sent: Delivery) -> int:
    answer = post(ingress(stack, monkeypatch), sent)
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def test_a_work_item_mention_ends_in_a_draft_pull_request_and_a_follow_up_continues_it(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azure_standin: AzureDevOpsAPI,
    azure_git: GitHttpServer,
) -> None:
    api = azure_standin
    repo, bare = widgets(api, azure_git)
    alice = api.add_person("alice@contoso.com")
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.llm.push(*fix_script())
        stack.link("alice", "azuredevops", alice.id, "alice")
        stack.start_worker()
        first = stack.job(run(stack, monkeypatch, delivery(work_item_mention(api, alice, ASK))))
        assert (first.state, first.outcome) == ("succeeded", "changed_code"), first.error
        [pull] = api.pulls
        opened_with = pull.description
        stack.llm.push(
            tool("execute_bash", command="printf '# adds two numbers\\n' > NOTES.md"),
            finish("changed_code", "Wrote NOTES.md."),
        )
        asked = pull_comment(api, repo, pull, alice, "@resolver also write NOTES.md")
        second = stack.job(run(stack, monkeypatch, delivery(asked)))
        logs = stack.logs()

    assert first.repo == REPO and first.branch and first.branch.startswith("resolver/")
    diff = run_git("--git-dir", str(bare), "diff", "main", first.branch)
    assert "-    return a - b\n+    return a + b" in diff
    assert pull.is_draft and pull.source == f"refs/heads/{first.branch}"
    assert pull.target == "refs/heads/main" and SUMMARY in opened_with
    assert first.pr_url == f"{api.url}/Widgets/_git/widgets/pullrequest/{pull.id}"

    # One status comment on the work item, edited in place as the job went on.
    bot = api.add_person(BOT)
    [status] = [c.text for c in api.work_items[("Widgets", 7)] if c.author == bot.id]
    assert "**Done**" in status and first.pr_url in status
    assert api.calls(STATUS_EDIT) and all(r.status == 200 for r in api.calls(STATUS_EDIT))

    # The follow-up in the pull request's thread worked on the same branch, liked the ask.
    assert (second.state, second.outcome) == ("succeeded", "changed_code"), second.error
    assert second.branch == first.branch and len(api.pulls) == 1
    files = run_git("--git-dir", str(bare), "ls-tree", "--name-only", first.branch)
    assert "NOTES.md" in files.split() and "Wrote NOTES.md." in pull.description
    asking = pull.threads[-2] if len(pull.threads) > 1 else pull.threads[0]
    assert bot.id in asking.comments[0].likes
    assert BOT_TOKEN not in logs


def test_a_strangers_mention_is_refused_before_the_agent_runs(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azure_standin: AzureDevOpsAPI,
    azure_git: GitHttpServer,
) -> None:
    api = azure_standin
    _, bare = widgets(api, azure_git)
    mallory = api.add_person("mallory@contoso.com")
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.link("mallory", "azuredevops", mallory.id, "mallory")
        stack.start_worker()
        job = stack.job(run(stack, monkeypatch, delivery(work_item_mention(api, mallory, ASK))))

    assert (job.state, job.outcome) == ("failed", "refused")
    assert stack.llm.requests == [] and api.pulls == []
    assert run_git("--git-dir", str(bare), "branch", "--format=%(refname:short)").strip() == "main"
    bot = api.add_person(BOT)
    [status] = [c.text for c in api.work_items[("Widgets", 7)] if c.author == bot.id]
    assert "only take requests from people who can push" in status


def test_bad_basic_auth_is_refused_and_makes_no_job(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azure_standin: AzureDevOpsAPI,
    azure_git: GitHttpServer,
) -> None:
    api = azure_standin
    widgets(api, azure_git)
    alice = api.add_person("alice@contoso.com")
    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.link("alice", "azuredevops", alice.id, "alice")
        payload = work_item_mention(api, alice, ASK)
        answer = post(ingress(stack, monkeypatch), delivery(payload, password="not the password"))
        assert answer.status_code == 401
        with session_scope() as session:
            assert session.scalars(select(Job.id)).all() == []
    assert api.pulls == []
