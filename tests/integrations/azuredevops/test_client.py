"""The REST 7.1 client against the stand-in: what each call sends and what it reads back, the
permission check through the Git Repositories namespace, and errors as the callbacks see
them. Every request and answer is then checked against Microsoft's descriptions."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from integrations.azuredevops.client import AzureDevOpsClient, authorization
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.conformance import answer_problems, request_problems
from integrations.azuredevops.standin.handlers import GIT
from integrations.azuredevops.standin.state import Repo
from integrations.standin.git_http import create_bare_repo, run_git
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.core.settings import get_settings
from tests.integrations.azuredevops.conftest import REPO
from tests.support.serving import served_answer


def conforms(api: AzureDevOpsAPI) -> None:
    """Every request the client made exists in the descriptions, with the right method,
    query, body and version; every answer has only keys its definition names."""
    sent = [p for r in api.requests for p in request_problems(r.method, r.path, r.query, r.body)]
    answered = [p for a in api.answers for p in answer_problems(a.method, a.path, a.body)]
    assert api.requests and not sent and not answered


def test_the_repository_is_read_with_its_clone_url_and_default_branch(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    found = client.repository(REPO)
    assert (found.full_name, found.clone_url, found.default_branch) == (
        REPO,
        repo.remote_url,
        "main",
    )
    conforms(azure_api)


def test_contribute_is_read_from_the_git_repositories_namespace(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    alice, bob = azure_api.add_person("alice@contoso.com"), azure_api.add_person("bob@contoso.com")
    stranger = azure_api.add_person("mallory@contoso.com")
    assert client.can_contribute(REPO, alice.id)
    assert not client.can_contribute(REPO, bob.id)
    assert not client.can_contribute(REPO, stranger.id)
    assert not client.can_contribute(REPO, "00000000-0000-0000-0000-00000000dead")
    acl = azure_api.calls("GET /{organization}/_apis/accesscontrollists/{securityNamespaceId}")[0]
    assert acl.query["includeExtendedInfo"] == ["true"]
    assert acl.query["token"] == [f"repoV2/{repo.project_id}/{repo.id}"]
    conforms(azure_api)


def test_a_status_thread_is_posted_edited_liked_and_listed(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    alice = azure_api.add_person("alice@contoso.com")
    pull = azure_api.add_pull(repo, "fix-add", alice)
    thread, comment = client.post_thread(REPO, pull.id, "Working on it")
    client.edit_comment(REPO, pull.id, thread, comment, "**Done**")
    reply = client.reply(REPO, pull.id, thread, "a reply")
    client.like(REPO, pull.id, thread, comment)
    [found] = client.threads(REPO, pull.id)
    assert [c["content"] for c in found["comments"]] == ["**Done**", "a reply"]
    assert found["comments"][1]["id"] == reply
    assert pull.threads[0].comments[0].likes == {azure_api.add_person("resolver@contoso.com").id}
    conforms(azure_api)


def test_a_draft_pull_request_is_opened_found_and_edited(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    opened = client.open_draft_pull(REPO, "resolver/7-fix", "main", "Fix add()", "Fixes #7")
    [pull] = azure_api.pulls
    assert pull.is_draft and (pull.source, pull.target) == (
        "refs/heads/resolver/7-fix",
        "refs/heads/main",
    )
    assert opened.url == f"{azure_api.url}/Widgets/_git/widgets/pullrequest/{pull.id}"
    assert client.find_open_pull(REPO, "resolver/7-fix") == opened
    assert client.find_open_pull(REPO, "other") is None
    assert client.open_pulls(REPO, "main") == (opened,)
    again = client.open_draft_pull(REPO, "resolver/7-fix", "main", "Fix add()", "again")
    assert again == opened and len(azure_api.pulls) == 1  # 409, the open one is returned
    client.edit_pull_body(REPO, pull.id, "Fixes #7, with a test")
    assert pull.description == "Fixes #7, with a test"
    assert client.get_pull(REPO, pull.id).head == "resolver/7-fix"
    conforms(azure_api)


def test_a_pull_request_from_a_fork_is_fetched_through_the_merge_azure_repos_keeps(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo, tmp_path: Path
) -> None:
    """A fork's branch is not in the repository: its head is the second parent of the merge
    Azure Repos keeps as refs/pull/N/merge. A branch of the fork is not the repository's own."""
    bare = create_bare_repo(tmp_path, "widgets")
    run_git("--git-dir", str(bare), "branch", "feature", "main")
    head = run_git("--git-dir", str(bare), "rev-parse", "main").strip()
    fork = azure_api.add_repo("Widgets/widgets-alice", f"{azure_api.url}/x", is_fork=True)
    alice = azure_api.add_person("alice@contoso.com")
    own = azure_api.add_pull(repo, "feature", alice)
    forked = azure_api.add_pull(repo, "feature", alice, fork=fork)
    merge = azure_api.keep_merge(forked, bare, head)

    found = client.get_pull(REPO, forked.id)
    assert (found.head, found.fetch_ref, found.fetch_commit) == (
        "feature",
        f"refs/pull/{forked.id}/merge",
        head,
    )
    assert merge != head and client.get_pull(REPO, own.id).fetch_ref is None
    assert client.find_open_pull(REPO, "feature") == client.get_pull(REPO, own.id)
    conforms(azure_api)


def test_work_item_comments_are_posted_edited_and_listed(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    found = client.post_work_item_comment("Widgets", 7, "Working on it")
    client.edit_work_item_comment("Widgets", 7, found, "**Done**")
    assert [c["text"] for c in client.work_item_comments("Widgets", 7)] == ["**Done**"]
    assert all(r.query["api-version"] == ["7.1-preview.4"] for r in azure_api.requests)
    conforms(azure_api)


def test_a_refused_token_is_permanent_and_an_outage_transient(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    bad = AzureDevOpsClient(azure_api.url, lambda: "not-a-token")
    with pytest.raises(PermanentCallbackError) as refused:
        bad.repository(REPO)
    assert refused.value.status == 401
    azure_api.fail(f"POST {GIT}/pullrequests", 503)
    with pytest.raises(TransientCallbackError):
        client.open_draft_pull(REPO, "b", "main", "t", "b")
    with pytest.raises(PermanentCallbackError):
        client.repository("not a repository")


def test_a_pat_goes_as_basic_and_an_entra_token_as_bearer() -> None:
    assert authorization("abc") == "Basic OmFiYw=="
    assert authorization("a.b.c") == "Bearer a.b.c"


def test_a_failed_builds_errors_and_log_tail_are_read(
    azure_api: AzureDevOpsAPI, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from integrations.azuredevops.provider import ci_report
    from resolver.contract.triggers import CiFailure, FailedCheck, Repository
    from tests.conftest import reset_caches
    from tests.integrations.azuredevops.conftest import BOT_TOKEN

    log = "".join(f"line {n}\n" for n in range(5000)) + "FAILED test_calc.py::test_add\n"
    run = azure_api.add_build("Widgets", [("pytest", "Bash exited with code 1", log)])
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_URL", azure_api.url)
    monkeypatch.setenv("RESOLVER_AZUREDEVOPS_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    reset_caches()
    check = FailedCheck("widgets-ci", "8c1bb2c5", "resolver/7-x", "failed", check_id=run.id)
    trigger = CiFailure(repo=Repository(full_name=REPO), number=3, check=check)
    report = ci_report(trigger, None, check, get_settings())
    reset_caches()
    assert report.annotations == ("pytest: Bash exited with code 1",)
    assert report.log_tail.endswith("FAILED test_calc.py::test_add\n") and report.log_cut
    assert not [
        p for a in azure_api.answers if not isinstance(a.body, str)
        for p in answer_problems(a.method, a.path, a.body)
    ]  # fmt: skip
    assert not [
        p for r in azure_api.requests for p in request_problems(r.method, r.path, r.query, r.body)
    ]


def test_a_line_thread_is_posted_with_its_context_and_the_bot_votes_as_a_reviewer(
    client: AzureDevOpsClient, azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    pull = azure_api.add_pull(repo, "fix-add", azure_api.add_person("alice@contoso.com"))
    bot = azure_api.add_person("resolver@contoso.com")
    at = {"line": 4, "offset": 1}
    context = {"filePath": "/core.py", "rightFileStart": at, "rightFileEnd": at}
    thread = client.create_thread(REPO, pull.id, "Here", context=context)
    assert thread["threadContext"] == context and thread["comments"][0]["author"]["id"] == bot.id
    assert client.reviewers(REPO, pull.id) == []
    client.vote(REPO, pull.id, bot.id, -5)
    assert [(r["id"], r["vote"]) for r in client.reviewers(REPO, pull.id)] == [(bot.id, -5)]
    with pytest.raises(PermanentCallbackError):  # a thread on no file's line
        client.create_thread(REPO, pull.id, "Here", context={"filePath": "core.py"})
    with pytest.raises(PermanentCallbackError):  # only one's own vote
        client.vote(REPO, pull.id, azure_api.add_person("alice@contoso.com").id, -5)
    assert pull.reviewers == {bot.id: -5}
    conforms(azure_api)


@pytest.mark.parametrize("answer", [b"[]", b"{}", b'{"id": null}', b'{"value": [1]}', b"<p>"])
def test_an_answer_of_the_wrong_shape_is_an_unusable_answer(answer: bytes) -> None:
    """A proxy's page, or JSON without what the call reads, fails once as Azure DevOps's
    answer, never as the client's own KeyError or TypeError."""
    with served_answer(answer) as url:
        client = AzureDevOpsClient(url, lambda: "pat")
        for call in (
            lambda: client.reply(REPO, 1, 2, "text"),
            lambda: client.post_thread(REPO, 1, "text"),
            lambda: client.threads(REPO, 1),
            lambda: client.repository(REPO),
            lambda: client.post_work_item_comment("Project", 3, "text"),
        ):
            with pytest.raises(PermanentCallbackError, match="unusable"):
                call()


@pytest.mark.parametrize(
    "record",
    [b'{"result": "failed", "issues": ["x"]}', b'{"result": "failed", "log": {"id": "x"}}'],
)
def test_a_build_record_of_the_wrong_shape_leaves_the_report_out_with_a_reason(
    record: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An issue that is no object, a log id that is no number: Azure DevOps's unusable answer
    (the fix starts from the check alone), not an error that failed the fix job."""
    from integrations.azuredevops.provider import ci_report
    from resolver.contract.triggers import CiFailure, FailedCheck, Repository
    from tests.conftest import reset_caches
    from tests.integrations.azuredevops.conftest import BOT_TOKEN

    answer = b'{"orchestrationPlan": {"planId": "p"}, "records": [' + record + b"]}"
    with served_answer(answer) as url:
        monkeypatch.setenv("RESOLVER_AZUREDEVOPS_URL", url)
        monkeypatch.setenv("RESOLVER_AZUREDEVOPS_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
        reset_caches()
        check = FailedCheck("widgets-ci", "8c1bb2c5", "resolver/7-x", "failed", check_id=4)
        trigger = CiFailure(repo=Repository(full_name=REPO), number=3, check=check)
        try:
            with pytest.raises(PermanentCallbackError, match="unusable"):
                ci_report(trigger, None, check, get_settings())
        finally:
            reset_caches()
