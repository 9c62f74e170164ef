"""End to end, on each forge: a signed mention on an issue → a real worker → the sandboxed agent →
one draft pull (request), with one status comment edited in place. What else a mention may end
in: test_github.py, test_gitlab.py, test_endings.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.standin.git_http import run_git
from tests.conftest import ResolverEnv
from tests.e2e.forges import EVERY_FORGE, ISSUE, Forge
from tests.e2e.stack import SUMMARY, fix_script, running_stack

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("forge", EVERY_FORGE, indirect=True)
def test_a_mention_on_an_issue_ends_in_one_draft_pull(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare = forge.widgets()
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.push(*fix_script())
        forge.start(stack)
        job = stack.job(forge.mention_on_issue(stack, monkeypatch, "@resolver please fix add()"))
        logs = stack.logs()

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert job.branch == f"resolver/{ISSUE}-add-subtracts-instead-of-adding"
    diff = run_git("--git-dir", str(bare), "diff", "main", job.branch)
    assert "-    return a - b\n+    return a + b" in diff
    log = run_git("--git-dir", str(bare), "log", "-1", "--format=%an%n%B", job.branch)
    assert log.startswith("resolver\n") and "Co-authored-by: alice" in log

    number, _ = forge.only_pull()
    pull = forge.opened(number)
    assert (pull.head, pull.base, pull.draft) == (job.branch, "main", True)
    assert f"Fixes #{ISSUE}" in pull.description and SUMMARY in pull.description
    assert f"http://resolver.test/jobs/{job.id}" in pull.description
    assert job.pr_url == pull.url
    assert job.cost_usd is not None and job.cost_usd > 0

    # One status comment, edited in place as the job went on; 👀 on the request.
    [status] = forge.said_on_issue()
    assert "**Done**" in status and job.pr_url in status
    assert f"draft {forge.pull_word}" in status
    edits = forge.status_edits()
    assert edits and all(answer == 200 for answer in edits)
    assert forge.reactions_on_request() == ["eyes"]
    # The sandbox never saw the token: no log names it.
    assert forge.token_marker not in logs
