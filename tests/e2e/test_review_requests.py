"""End to end, on GitHub, GitLab, Forgejo, Bitbucket and Azure DevOps: `@bot review` on alice's
pull request runs the sandboxed agent on its head; the scripted model runs the tests, leaves
three comments on lines of the diff (one with a suggested change) and one on a line outside it,
and asks for changes. The forge receives one review with the three comments, each where the
model put it (on GitHub, checked against GitHub's OpenAPI description, comments and all; on
Bitbucket and Azure DevOps, line comments and a summary, with the forge's "changes requested");
the fourth is in the summary, with the Verification block; nothing is pushed. On GitHub, GitLab,
Forgejo and Bitbucket, an auto-review on new commits comments only on their lines.

Which words ask for a review, where a comment may go and what the summary says are decided
without a stack (tests/features/review_requests/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import conformance_problems
from integrations.standin.git_http import branch_head, run_git
from resolver.features.review_requests.contract import RESULT_KEY, read_review
from tests.conftest import ResolverEnv
from tests.e2e import gitlab_flow
from tests.e2e.conflicts_flow import commit_to
from tests.e2e.forges import (
    PULL_FORGES,
    AzureDevOpsForge,
    BitbucketForge,
    Forge,
    ForgejoForge,
    GitHubForge,
    GitLabForge,
    deliver,
    ended,
)
from tests.e2e.review_requests_flow import (
    FEATURE,
    FEATURE_CALC,
    alices_pull,
    bitbucket_pull_event,
    forge_conformance,
    forgejo_pull_event,
    from_a_fork,
    merge_request_event,
    pull_request_event,
    reviews,
)
from tests.e2e.stack import REPO_FILES, by_step, ingress, running_stack
from tests.integrations.deliveries import post
from tests.support.llm_server import Reply, tool

pytestmark = pytest.mark.timeout(300)

TESTS = "python3 -m unittest -q 2>&1 | tail -n 2"
SUGGESTED = "    return a * b"
OUTSIDE = "test_calc.py never tests mul()."
SAID = "mul() adds, and nothing tests it."


def reviewer() -> list[Reply]:
    """The model's part: run the tests, comment on three lines of the diff and one outside it,
    and ask for changes."""
    return [
        tool("execute_bash", command=TESTS),
        tool(
            "comment",
            path="calc.py",
            line=6,
            side="RIGHT",
            body="mul() adds.",
            suggestion=SUGGESTED,
        ),
        tool("comment", path="calc.py", line=2, body="add() still subtracts."),
        tool("comment", path="calc.py", line=9, side="RIGHT", body="sub() has no test."),
        tool("comment", path="test_calc.py", line=3, body=OUTSIDE),
        tool("finish", verdict="request_changes", summary=SAID),
    ]


@pytest.mark.parametrize("forge", PULL_FORGES, indirect=True)
def test_a_review_request_posts_one_review_with_the_anchored_comments(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    bare = forge.widgets()
    run_git("--git-dir", str(bare), "branch", FEATURE, "main")
    head = commit_to(bare, FEATURE, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(reviewer()))
        forge.start(stack)
        job = stack.job(forge.comment_on_pull(stack, monkeypatch, number, "@resolver review this"))

    assert (job.state, job.outcome) == ("succeeded", "answered"), job.error
    assert job.trigger["kind"] == "review_request"
    [review] = reviews(forge, number)
    if not isinstance(forge, BitbucketForge | AzureDevOpsForge):  # their comments name no commit
        assert review.commit == head
    placed = sorted((c.path, c.line) for c in review.comments)
    assert placed == [("calc.py", 2), ("calc.py", 6), ("calc.py", 9)]
    [suggesting] = [c for c in review.comments if c.line == 6]
    assert f"```suggestion\n{SUGGESTED}\n```" in suggesting.body
    # The comment outside the diff, the verdict and what the reviewer ran are in the summary.
    assert SAID in review.summary and OUTSIDE in review.summary
    assert "`test_calc.py` line 3" in review.summary
    assert "Changes requested" in review.summary
    assert "### Verification" in review.summary and "python3 -m unittest" in review.summary
    if isinstance(forge, GitHubForge | ForgejoForge):
        assert review.verdict == "REQUEST_CHANGES"
    if isinstance(forge, BitbucketForge):
        assert review.verdict == "changes_requested"
    if isinstance(forge, AzureDevOpsForge):
        assert review.verdict == "-5"  # waiting for the author
    if isinstance(forge, GitHubForge):
        assert conformance_problems(forge.api.requests) == []
    # A review never pushes: main and the pull request's branch are as they were.
    assert run_git("--git-dir", str(bare), "branch", "--format=%(refname:short)").split() == [
        FEATURE,
        "main",
    ]
    assert branch_head(bare, FEATURE) == head
    assert job.branch is None


AUTO = {".resolver/config.yml": "review:\n  auto: true\n"}
NEWER_CALC = FEATURE_CALC + "\n\ndef div(a, b):\n    return a * b\n"


def auto_reviewer() -> list[Reply]:
    """The same model for both reviews: a comment on mul() (line 6) and one on div() (line 14,
    which only the second head has)."""
    return [
        tool("comment", path="calc.py", line=6, body="mul() adds."),
        tool("comment", path="calc.py", line=14, body="div() multiplies."),
        tool("finish", verdict="comment", summary="Two functions do the wrong thing."),
    ]


@pytest.mark.parametrize("forge", ["github"], indirect=True)
def test_an_auto_review_on_new_commits_comments_only_on_the_new_lines(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    assert isinstance(forge, GitHubForge)
    bare = forge.widgets({**REPO_FILES, **AUTO})
    run_git("--git-dir", str(bare), "branch", FEATURE, "main")
    first = commit_to(bare, FEATURE, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(auto_reviewer()))
        forge.start(stack)
        opened = deliver(stack, monkeypatch, pull_request_event(forge, "opened", number, first))
        second = commit_to(bare, FEATURE, {"calc.py": NEWER_CALC}, "Add div()")
        pushed = deliver(
            stack, monkeypatch, pull_request_event(forge, "synchronize", number, second)
        )
        # The same head again (a redelivery, or opened and marked ready at once): one review.
        again = post(
            ingress(stack, monkeypatch), pull_request_event(forge, "synchronize", number, second)
        )
        jobs = [stack.job(ended(opened)), stack.job(ended(pushed))]

    assert [(j.state, j.outcome) for j in jobs] == [("succeeded", "answered")] * 2
    assert again.json() == {"job_id": pushed, "duplicate": True}
    first_review, second_review = reviews(forge, number)
    assert [(c.path, c.line) for c in first_review.comments] == [("calc.py", 6)]
    assert "`calc.py` line 14: div() multiplies." in first_review.summary
    assert "since my last review" not in first_review.summary
    # On new commits: only their lines take comments; the rest is in the summary, which says
    # the review covers only what changed since the last one.
    assert (second_review.commit, [(c.path, c.line) for c in second_review.comments]) == (
        second,
        [("calc.py", 14)],
    )
    assert "`calc.py` line 6: mul() adds." in second_review.summary
    assert f"only what changed since my last review ({first[:12]})" in second_review.summary
    # An auto-review says nothing but its review: no 👀, no status message.
    assert forge.said_on_pull(number) == []


@pytest.mark.parametrize("forge", ["forgejo"], indirect=True)
def test_a_forgejo_auto_review_on_new_commits_comments_only_on_the_new_lines(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    assert isinstance(forge, ForgejoForge)
    bare = forge.widgets({**REPO_FILES, **AUTO})
    run_git("--git-dir", str(bare), "branch", FEATURE, "main")
    first = commit_to(bare, FEATURE, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge)
    opened_at = forgejo_pull_event(forge, "pull_request.opened", number, first)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(auto_reviewer()))
        forge.start(stack)
        opened = deliver(stack, monkeypatch, opened_at)
        second = commit_to(bare, FEATURE, {"calc.py": NEWER_CALC}, "Add div()")
        synced = forgejo_pull_event(forge, "pull_request_sync.synchronized", number, second)
        pushed = deliver(stack, monkeypatch, synced)
        jobs = [stack.job(ended(opened)), stack.job(ended(pushed))]

    assert [(j.state, j.outcome) for j in jobs] == [("succeeded", "answered")] * 2
    assert all(j.trigger["kind"] == "review_request" and j.trigger["auto"] for j in jobs)
    first_review, second_review = reviews(forge, number)
    assert [(c.path, c.line) for c in first_review.comments] == [("calc.py", 6)]
    assert (second_review.commit, [(c.path, c.line) for c in second_review.comments]) == (
        second,
        [("calc.py", 14)],
    )
    assert f"only what changed since my last review ({first[:12]})" in second_review.summary
    assert forge.said_on_pull(number) == []  # no 👀 and no status message


@pytest.mark.parametrize("forge", ["bitbucket"], indirect=True)
def test_a_bitbucket_auto_review_on_new_commits_comments_only_on_the_new_lines(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    assert isinstance(forge, BitbucketForge)
    bare = forge.widgets({**REPO_FILES, **AUTO})
    run_git("--git-dir", str(bare), "branch", FEATURE, "main")
    first = commit_to(bare, FEATURE, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(auto_reviewer()))
        forge.start(stack)
        created = bitbucket_pull_event(forge, "pullrequest:created", number, first)
        opened = deliver(stack, monkeypatch, created)
        second = commit_to(bare, FEATURE, {"calc.py": NEWER_CALC}, "Add div()")
        updated = bitbucket_pull_event(forge, "pullrequest:updated", number, second)
        pushed = deliver(stack, monkeypatch, updated)
        # Bitbucket's update does not say what changed: an edit of the title at the same
        # commit is the same review.
        [pull] = [p for p in forge.api.pulls if p.id == number]
        pull.title = "Add mul(), sub() and div()"
        retitled = bitbucket_pull_event(forge, "pullrequest:updated", number, second)
        again = post(ingress(stack, monkeypatch), retitled)
        jobs = [stack.job(ended(opened)), stack.job(ended(pushed))]

    assert [(j.state, j.outcome) for j in jobs] == [("succeeded", "answered")] * 2
    assert all(j.trigger["kind"] == "review_request" and j.trigger["auto"] for j in jobs)
    assert again.json() == {"job_id": pushed, "duplicate": True}
    # Bitbucket's review is its line comments and a summary comment, one per review; the line
    # comments name no commit, so each review's are told apart by their lines.
    first_review, second_review = reviews(forge, number)
    assert sorted((c.path, c.line) for c in first_review.comments) == [
        ("calc.py", 6),
        ("calc.py", 14),
    ]
    assert "`calc.py` line 14: div() multiplies." in first_review.summary
    assert "since my last review" not in first_review.summary
    assert "`calc.py` line 6: mul() adds." in second_review.summary
    assert f"only what changed since my last review ({first[:12]})" in second_review.summary
    # An auto-review says nothing but its review: mul() on the first head, div() on the
    # second and the two summaries, each with its review's tag; no status comment.
    said = forge.said_on_pull(number)
    assert len(said) == 4 and all("resolver:review-" in s for s in said)


@pytest.mark.parametrize("forge", ["gitlab"], indirect=True)
def test_a_gitlab_auto_review_on_new_commits_comments_only_on_the_new_lines(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    assert isinstance(forge, GitLabForge)
    bare = forge.widgets({**REPO_FILES, **AUTO})
    run_git("--git-dir", str(bare), "branch", FEATURE, "main")
    first = commit_to(bare, FEATURE, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(auto_reviewer()))
        forge.start(stack)
        opened = deliver(stack, monkeypatch, merge_request_event(forge, number, first))
        second = commit_to(bare, FEATURE, {"calc.py": NEWER_CALC}, "Add div()")
        new_commits = merge_request_event(forge, number, second, oldrev=first)
        pushed = deliver(stack, monkeypatch, new_commits)
        # The same head again (a redelivery, or new commits and marked ready at once): one review.
        again = post(ingress(stack, monkeypatch), merge_request_event(forge, number, second, first))
        jobs = [stack.job(ended(opened)), stack.job(ended(pushed))]

    assert [(j.state, j.outcome) for j in jobs] == [("succeeded", "answered")] * 2
    assert all(j.trigger["kind"] == "review_request" and j.trigger["auto"] for j in jobs)
    assert again.json() == {"job_id": pushed, "duplicate": True}
    # GitLab's review is its diff threads, each on the head it saw, and a summary note.
    bot = forge.api.add_user(gitlab_flow.BOT)
    threads = [
        n.position
        for n in sorted(forge.api.notes.values(), key=lambda n: n.id)
        if (n.iid, n.author, n.type) == (number, bot, "DiffNote") and n.position is not None
    ]
    placed = [(p["head_sha"], p["new_path"], p.get("new_line")) for p in threads]
    assert placed == [(first, "calc.py", 6), (second, "calc.py", 14)]
    first_summary, second_summary = [s.summary for s in reviews(forge, number)]
    assert "`calc.py` line 14: div() multiplies." in first_summary
    assert "since my last review" not in first_summary
    assert "`calc.py` line 6: mul() adds." in second_summary
    assert f"only what changed since my last review ({first[:12]})" in second_summary
    # An auto-review says nothing but its review: no status message, no other note.
    said = [
        n.body
        for n in forge.api.notes.values()
        if (n.iid, n.author) == (number, bot) and n.type != "DiffNote"
    ]
    assert said == [first_summary, second_summary]


@pytest.mark.parametrize(
    "forge", ["github", "gitlab", "forgejo", "bitbucket", "azuredevops"], indirect=True
)
def test_a_pull_request_from_a_fork_is_reviewed_on_the_head_the_forge_keeps(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    """alice's branch lives in her fork: the base repository has no such branch, only what the
    forge keeps there of it (refs/pull/N/head, refs/merge-requests/N/head; on Azure DevOps its
    merge, refs/pull/N/merge, whose second parent is the head), or nothing (Bitbucket Cloud: the
    head is fetched from the fork). The review is of that commit, and pushes nothing anywhere."""
    bare = forge.widgets()
    run_git("--git-dir", str(bare), "branch", FEATURE, "main")
    head = commit_to(bare, FEATURE, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge)
    kept = from_a_fork(forge, bare, number, head)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(reviewer()))
        forge.start(stack)
        job = stack.job(forge.comment_on_pull(stack, monkeypatch, number, "@resolver review"))

    assert (job.state, job.outcome) == ("succeeded", "answered"), job.error
    [review] = reviews(forge, number)
    reviewed = read_review((job.result or {}).get(RESULT_KEY))
    assert reviewed is not None and reviewed.head_sha == head
    if not isinstance(forge, BitbucketForge | AzureDevOpsForge):  # their comments name no commit
        assert review.commit == head
    placed = sorted((c.path, c.line) for c in review.comments)
    assert placed == [("calc.py", 2), ("calc.py", 6), ("calc.py", 9)]
    if isinstance(forge, GitHubForge):
        assert conformance_problems(forge.api.requests) == []
    if isinstance(forge, ForgejoForge | BitbucketForge | AzureDevOpsForge):
        assert forge_conformance(forge) == []
    refs = run_git("--git-dir", str(bare), "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/heads/main", *kept]
    assert not [r for r in forge.git.requests if "receive-pack" in r.path]  # nothing pushed
    if isinstance(forge, BitbucketForge):
        # The fork was read with the bot's token (x-token-auth), for that fetch only.
        fetched = {(r.path.split(".git/")[0], r.user) for r in forge.git.requests}
        assert ("/alice/widgets", "x-token-auth") in fetched


@pytest.mark.parametrize(
    ("forge", "branch"),
    [
        ("github", FEATURE),
        ("bitbucket", FEATURE),
        ("azuredevops", FEATURE),
        # A fork that names its branch as the bot names its own is still a fork.
        ("github", "resolver/7-fix-add"),
    ],
    indirect=["forge"],
)
def test_work_asked_on_a_pull_request_from_a_fork_is_declined_with_what_can_be_done(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forge: Forge,
    branch: str,
) -> None:
    """The fork's branch is not the bot's to push to: the job says so, and offers a review."""
    bare = forge.widgets()
    run_git("--git-dir", str(bare), "branch", branch, "main")
    head = commit_to(bare, branch, {"calc.py": FEATURE_CALC}, "Add mul() and sub()")
    number = alices_pull(forge, branch)
    kept = from_a_fork(forge, bare, number, head, branch)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        forge.start(stack)
        job = stack.job(forge.comment_on_pull(stack, monkeypatch, number, "@resolver fix mul()"))

    assert (job.state, job.outcome) == ("failed", "could_not"), job.error
    assert any("comes from a fork" in said for said in forge.said_on_pull(number))
    refs = run_git("--git-dir", str(bare), "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/heads/main", *kept]
    assert not [r for r in forge.git.requests if "receive-pack" in r.path]
