"""What the review tests need of each forge beyond `forges.Forge`: someone's pull request, and
the review the stand-in received (its body, and each line comment with its place)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from integrations.azuredevops.standin import conformance as azure_conformance
from integrations.bitbucket.standin import conformance as bitbucket_conformance
from integrations.forgejo.standin import conformance as forgejo_conformance
from integrations.github.standin.api import BOT_LOGIN
from integrations.standin.git_http import run_git
from tests.e2e import gitlab_flow
from tests.e2e.forges import (
    AzureDevOpsForge,
    BitbucketForge,
    Forge,
    ForgejoForge,
    GitHubForge,
    GitLabForge,
)
from tests.e2e.github_flow import ALICE_ID
from tests.integrations.azuredevops import flow as azure_flow
from tests.integrations.bitbucket import flow as bitbucket_flow
from tests.integrations.deliveries import Delivery, github, gitlab, load
from tests.integrations.forgejo import flow as forgejo_flow
from tests.integrations.github.conftest import INSTALLATION_ID, REPO

FEATURE = "feature"
FEATURE_CALC = (
    "def add(a, b):\n    return a - b\n\n\n"
    "def mul(a, b):\n    return a + b\n\n\n"
    "def sub(a, b):\n    return a - b\n"
)


@dataclass(frozen=True)
class Posted:
    """A line comment as the forge holds it: file, line (in the head), body."""

    path: str
    line: int
    body: str


@dataclass(frozen=True)
class Received:
    """What the forge received of the bot's review."""

    summary: str
    verdict: str | None
    commit: str | None
    comments: tuple[Posted, ...]


def alices_pull(forge: Forge, branch: str = FEATURE) -> int:
    """alice's open pull from `branch` into main (registered with the adapter); its number.
    On Azure DevOps the bot is one of its reviewers, so that it may vote."""
    if isinstance(forge, BitbucketForge):
        return forge.api.add_pull(forge.repo, branch, "Add mul() and sub()", author="alice").id
    if isinstance(forge, AzureDevOpsForge):
        alice = forge.api.add_person("alice@contoso.com")
        pull = forge.api.add_pull(forge.repo, branch, alice, title="Add mul() and sub()")
        pull.reviewers[forge.api.add_person(azure_flow.BOT).id] = 0
        return pull.id
    if isinstance(forge, GitHubForge):
        forge.api.add_pull(REPO, branch, "main", "Add mul() and sub()", "alice")
    elif isinstance(forge, GitLabForge):
        alice = forge.api.add_user("alice")
        forge.api.add_merge_request(forge.project, branch, "Add mul() and sub()", author=alice)
    elif isinstance(forge, ForgejoForge):
        forge.api.add_pull(forge.repo, branch, "Add mul() and sub()", author="alice")
    number, _ = forge.only_pull()
    return number


def from_a_fork(
    forge: Forge, bare: Path, number: int, head: str, branch: str = FEATURE
) -> list[str]:
    """alice's pull `number` made one from her fork, whose `branch` is at `head`, as each
    forge serves it; its branch then leaves the base repository. The refs the forge keeps of it
    in the base repository: its head (GitHub, GitLab, Forgejo), its merge (Azure DevOps), or
    none (Bitbucket Cloud, whose public fork `alice/widgets` the bot reads)."""
    git = ("--git-dir", str(bare))
    if isinstance(forge, BitbucketForge):
        fork = forge.api.add_repo("alice/widgets", forge.git.url_for("alice/widgets"))
        fork.private, fork.parent = False, bitbucket_flow.REPO
        run_git("clone", "--quiet", "--bare", str(bare), str(forge.git.bare_path(fork.full_name)))
        [bitbucket_pull] = [p for p in forge.api.pulls if p.id == number]
        bitbucket_pull.fork, kept = fork, []
    elif isinstance(forge, AzureDevOpsForge):
        name = f"{azure_flow.PROJECT}/widgets-alice"
        fork = forge.api.add_repo(name, forge.git.url_for(name), is_fork=True)
        [azure_pull] = [p for p in forge.api.pulls if p.id == number]
        azure_pull.fork = fork
        forge.api.keep_merge(azure_pull, bare, head)
        kept = [f"refs/pull/{number}/merge"]
    else:
        if isinstance(forge, GitHubForge):
            [pull] = [p for p in forge.api.pulls if p.number == number]
            pull.head_repo, kept = "alice/widgets", [f"refs/pull/{number}/head"]
        elif isinstance(forge, ForgejoForge):
            [forgejo_pull] = [p for p in forge.api.pulls if p.number == number]
            forgejo_pull.fork, kept = "alice/widgets", [f"refs/pull/{number}/head"]
        else:
            assert isinstance(forge, GitLabForge)
            forge.merge_requests[number].source_project_id = forge.project.id + 1000
            kept = [f"refs/merge-requests/{number}/head"]
        run_git(*git, "update-ref", kept[0], head)
    run_git(*git, "update-ref", "-d", f"refs/heads/{branch}")
    return kept


def forge_conformance(forge: ForgejoForge | BitbucketForge | AzureDevOpsForge) -> list[str]:
    """What the stand-in was sent, or answered, that the vendor's API description lacks (the
    query goes as a mapping: Azure DevOps' description also checks its api-version)."""
    rules = {
        "forgejo": forgejo_conformance.API,
        "bitbucket": bitbucket_conformance.API,
        "azuredevops": azure_conformance.API,
    }[forge.name]
    api = forge.api
    sent = [
        p for r in api.requests for p in rules.request_problems(r.method, r.path, r.query, r.body)
    ]
    answered = [
        p
        for a in api.answers
        if not isinstance(a.body, str | bytes)
        for p in rules.answer_problems(a.method, a.path, a.body)
    ]
    return sent + answered


def reviews(forge: Forge, number: int) -> list[Received]:
    """Each review the bot posted on pull `number` (GitLab: its diff threads, then the summary
    note that closes them, as one)."""
    if isinstance(forge, GitHubForge):
        return [
            Received(
                r.body,
                r.event,
                r.commit_id,
                tuple(Posted(c["path"], c["line"], c["body"]) for c in r.comments),
            )
            for r in forge.api.reviews
            if (r.number, r.login) == (number, BOT_LOGIN)
        ]
    if isinstance(forge, ForgejoForge):
        return _forgejo_reviews(forge, number)
    if isinstance(forge, BitbucketForge):
        return _bitbucket_reviews(forge, number)
    if isinstance(forge, AzureDevOpsForge):
        return _azure_reviews(forge, number)
    assert isinstance(forge, GitLabForge)
    bot = forge.api.add_user(gitlab_flow.BOT)
    notes = sorted(forge.api.notes.values(), key=lambda n: n.id)
    mine = [n for n in notes if (n.kind, n.iid, n.author) == ("merge_requests", number, bot)]
    threads = [n for n in mine if n.type == "DiffNote" and n.position is not None]
    posted = tuple(
        Posted(n.position["new_path"], n.position.get("new_line") or n.position["old_line"], n.body)
        for n in threads
        if n.position is not None
    )
    heads = {n.position["head_sha"] for n in threads if n.position is not None}
    commit = heads.pop() if len(heads) == 1 else None
    summaries = [n.body for n in mine if "resolver:review-" in n.body]
    return [Received(summary, None, commit, posted) for summary in summaries]


def pull_request_event(forge: GitHubForge, action: str, number: int, head: str) -> Delivery:
    """GitHub's `pull_request.<action>` for alice's pull `number`, now at `head`."""
    name = {"synchronize": "synchronize__new_commits"}.get(action, f"{action}__plain")
    payload: dict[str, Any] = load("github", f"pull_request.{name}")
    alice = {"login": "alice", "id": ALICE_ID, "type": "User"}
    payload["pull_request"].update(
        number=number,
        title="Add mul() and sub()",
        body="",
        draft=False,
        html_url=f"{forge.api.web_url}/{REPO}/pull/{number}",
        user=alice,
        head={"ref": FEATURE, "sha": head},
        base={"ref": "main", "sha": None},
    )
    payload.update(number=number, sender=alice, installation={"id": INSTALLATION_ID})
    payload["repository"].update(
        full_name=REPO,
        name=REPO.split("/")[1],
        clone_url=forge.git.url_for(REPO),
        default_branch="main",
    )
    return github(f"pull_request.{action}", payload)


def merge_request_event(
    forge: GitLabForge, number: int, head: str, oldrev: str | None = None
) -> Delivery:
    """GitLab's `Merge Request Hook` for alice's merge request `number` at `head`: opened, or
    given new commits (an `update` with `oldrev`)."""
    merge_request = forge.merge_requests[number]
    fixture = "Merge_Request_Hook__new_commits" if oldrev else "Merge_Request_Hook__opened"
    payload: dict[str, Any] = load("gitlab", fixture)
    web_url = f"{forge.api.url}/{gitlab_flow.PROJECT}"
    payload["user"] = {"id": merge_request.author, "username": "alice", "name": "Alice"}
    payload["project"].update(
        id=forge.project.id,
        path_with_namespace=gitlab_flow.PROJECT,
        git_http_url=forge.project.clone_url,
        default_branch=forge.project.default_branch,
        web_url=web_url,
    )
    payload["object_attributes"].update(
        iid=number,
        source_branch=merge_request.source_branch,
        target_branch=merge_request.target_branch,
        title=merge_request.title,
        description=merge_request.description,
        author_id=merge_request.author,
        draft=False,
        url=f"{web_url}/-/merge_requests/{number}",
        last_commit={"id": head},
        **({"oldrev": oldrev} if oldrev else {}),
    )
    return gitlab("Merge Request Hook", payload)


def _forgejo_reviews(forge: ForgejoForge, number: int) -> list[Received]:
    bot = forge.api.user_id(forgejo_flow.BOT)
    posted = [
        r
        for r in forge.api.calls("POST /repos/{owner}/{repo}/pulls/{index}/reviews")
        if r.status == 200
    ]
    commits = [r.body.get("commit_id") if isinstance(r.body, dict) else None for r in posted]
    mine = [r for r in forge.api.reviews if (r.number, r.user_id) == (number, bot)]
    return [
        Received(
            r.body,
            r.state,
            commit,
            tuple(Posted(c.path, abs(c.line), c.body) for c in r.comments),
        )
        for r, commit in zip(mine, commits, strict=True)
    ]


def _bitbucket_reviews(forge: BitbucketForge, number: int) -> list[Received]:
    """The bot's line comments and its tagged summary comment, as one review; its verdict is
    "changes requested" where the bot asked for changes on the pull request."""
    bot = forge.api.add_user(bitbucket_flow.BOT)
    mine = [c for c in forge.api.comments.values() if (c.number, c.user) == (number, bot)]
    lines = tuple(
        Posted(c.path, c.line, c.raw) for c in mine if c.path is not None and c.line is not None
    )
    [pull] = [p for p in forge.api.pulls if p.id == number]
    verdict = "changes_requested" if bot in pull.changes_requested else None
    summaries = [c.raw for c in mine if c.path is None and "resolver:review-" in c.raw]
    return [Received(summary, verdict, None, lines) for summary in summaries]


def _azure_reviews(forge: AzureDevOpsForge, number: int) -> list[Received]:
    """The bot's threads on lines and its tagged summary thread, as one review; its verdict is
    the bot's vote as a reviewer."""
    bot = forge.api.add_person(azure_flow.BOT).id
    [pull] = [p for p in forge.api.pulls if p.id == number]
    mine = [t for t in pull.threads if t.comments and t.comments[0].author == bot]
    lines = tuple(
        Posted(
            str(t.context["filePath"]).lstrip("/"),
            int((t.context.get("rightFileStart") or t.context["leftFileStart"])["line"]),
            t.comments[0].content,
        )
        for t in mine
        if t.context is not None
    )
    vote = pull.reviewers.get(bot)
    summaries = [
        t.comments[0].content
        for t in mine
        if t.context is None and "resolver:review-" in t.comments[0].content
    ]
    return [Received(s, None if vote is None else str(vote), None, lines) for s in summaries]


def forgejo_pull_event(forge: ForgejoForge, key: str, number: int, head: str) -> Delivery:
    """Forgejo's `pull_request.opened` (or `pull_request_sync.synchronized`, new commits) for
    alice's pull `number`, now at `head`."""
    name = {"pull_request.opened": "plain"}.get(key, "new_commits")
    payload: dict[str, Any] = load("forgejo", f"{key}__{name}")
    alice = forge.api.user(forge.api.user_id("alice"))
    url = f"{forge.api.url}/{forgejo_flow.REPO}/pulls/{number}"
    payload["pull_request"].update(
        number=number, title="Add mul() and sub()", body="", draft=False, html_url=url, user=alice
    )
    payload["pull_request"]["head"].update(label=FEATURE, ref=FEATURE, sha=head)
    payload["pull_request"]["base"].update(label="main", ref="main")
    payload.update(number=number, sender=alice)
    payload["repository"].update(forgejo_flow.repository_json(forge.api, forge.repo))
    return forgejo_flow.delivery(payload, key)


def bitbucket_pull_event(forge: BitbucketForge, key: str, number: int, head: str) -> Delivery:
    """Bitbucket Cloud's `pullrequest:created` (or `pullrequest:updated`: new commits, or an
    edit) for alice's pull `number`, now at `head`, named by its first 12 hex digits as
    Bitbucket names a commit."""
    [pull] = [p for p in forge.api.pulls if p.id == number]
    payload: dict[str, Any] = load("bitbucket", "pullrequest_updated__plain")
    url = f"{forge.api.url}/{forge.repo.full_name}"
    payload["actor"] = forge.api.user(pull.author)
    payload["repository"].update(
        full_name=forge.repo.full_name,
        name=forge.repo.full_name.split("/")[1],
        links={"html": {"href": url}},
    )
    payload["pullrequest"].update(
        id=number,
        title=pull.title,
        description=pull.description,
        draft=pull.draft,
        author=forge.api.user(pull.author),
        links={"html": {"href": f"{url}/pull-requests/{number}"}},
    )
    payload["pullrequest"]["source"].update(branch={"name": pull.head}, commit={"hash": head[:12]})
    payload["pullrequest"]["destination"]["branch"] = {"name": pull.base}
    return bitbucket_flow.delivery(payload, key)
