"""The Azure DevOps side of the end-to-end tests: the stand-in and a git server, the project
`Widgets` with its repository `widgets` and work item 7, the stack's settings, and deliveries
made from the recorded payloads to carry what the stand-in holds."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pytest

from integrations.azuredevops.routes import GATHER_GRACE, REVIEW_WINDOW
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.state import Person, Pull, Repo, WorkItemComment
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from tests.e2e.stack import REPO_FILES
from tests.integrations.azuredevops.deliveries import (
    HEADER_SECRET,
    PASSWORD,
    USER,
    headers_for,
    load,
)
from tests.integrations.deliveries import Delivery

REPO: Final = "Widgets/widgets"
PROJECT: Final = "Widgets"
WORK_ITEM: Final = 7
TITLE: Final = "add() subtracts instead of adding"
BOT: Final = "resolver@contoso.com"
BOT_TOKEN: Final = "azpat" * 10
STATUS_EDIT: Final = (
    "PATCH /{organization}/{project}/_apis/wit/workItems/{workItemId}/comments/{commentId}"
)
THREAD_EDIT: Final = (
    "PATCH /{organization}/{project}/_apis/git/repositories/{repositoryId}/pullRequests"
    "/{pullRequestId}/threads/{threadId}/comments/{commentId}"
)
_notifications = iter(range(1000, 10**6))


@pytest.fixture
def azure_standin() -> Iterator[AzureDevOpsAPI]:
    with AzureDevOpsAPI() as api:
        api.add_person(BOT, token=BOT_TOKEN)
        yield api


@pytest.fixture
def azure_git(tmp_path: Path) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; only the bot's token may push."""
    with GitHttpServer(tmp_path / "azure-git", tokens={BOT_TOKEN}) as server:
        yield server


def widgets(
    api: AzureDevOpsAPI, git: GitHttpServer, files: Mapping[str, str] = REPO_FILES
) -> tuple[Repo, Path]:
    """`Widgets/widgets` with `files` on main, work item 7; the bot and alice contribute, bob
    reads."""
    bare = create_bare_repo(git.root, REPO, dict(files))
    repo = api.add_repo(REPO, git.url_for(REPO))
    for name, contribute in (("resolver", True), ("alice", True), ("bob", False)):
        api.allow(repo, api.add_person(f"{name}@contoso.com"), contribute=contribute)
    api.add_work_item(PROJECT, WORK_ITEM)
    return repo, bare


def settings(api: AzureDevOpsAPI) -> dict[str, str]:
    return {
        "RESOLVER_AZUREDEVOPS_URL": api.url,
        "RESOLVER_AZUREDEVOPS_IDENTITY_URL": api.url,
        "RESOLVER_AZUREDEVOPS_TOKEN": BOT_TOKEN,
        "RESOLVER_AZUREDEVOPS_WEBHOOK_USER": USER,
        "RESOLVER_AZUREDEVOPS_WEBHOOK_PASSWORD": PASSWORD,
        "RESOLVER_AZUREDEVOPS_WEBHOOK_HEADER_SECRET": HEADER_SECRET,
    }


def _identity(api: AzureDevOpsAPI, person: Person) -> dict[str, Any]:
    return api.ref(person.id)


def _envelope(payload: dict[str, Any]) -> dict[str, Any]:
    """A notification of its own: the service numbers each one."""
    return dict(payload, notificationId=next(_notifications))


def _repository(api: AzureDevOpsAPI, repo: Repo) -> dict[str, Any]:
    from integrations.azuredevops.standin.state import repo_json

    return repo_json(repo, api.url)


def work_item_mention(api: AzureDevOpsAPI, person: Person, text: str) -> dict[str, Any]:
    """The recorded `workitem.commented`, carrying `person`'s comment `text` on work item 7."""
    api.work_items[(PROJECT, WORK_ITEM)].append(
        WorkItemComment(next(api.ids), WORK_ITEM, PROJECT, text, person.id)
    )
    payload = copy.deepcopy(load("workitem.commented__mention"))
    fields = payload["resource"]["fields"]
    fields.update({"System.History": f"<div>{text}</div>", "System.Title": TITLE})
    fields["System.ChangedBy"] = _identity(api, person)
    payload["resource"]["url"] = f"{api.url}/_apis/wit/workItems/{WORK_ITEM}"
    return _envelope(payload)


def pull_comment(
    api: AzureDevOpsAPI,
    repo: Repo,
    pull: Pull,
    person: Person,
    text: str,
    *,
    published: datetime | None = None,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The recorded pull request comment event, carrying `person`'s new thread `text` (on a
    line of the diff with a `context`). Unless `published` says when, the comment says it was
    published a review window ago: on the bot's pull request, its review batch has gathered
    already (and two such mentions of one person in the same minute are one batch)."""
    thread = api.add_thread(pull, person, text, context=context)
    [comment] = thread.comments
    if published is None:
        published = datetime.now(UTC) - REVIEW_WINDOW - GATHER_GRACE
    payload = copy.deepcopy(load("ms.vss-code.git-pullrequest-comment-event__in_thread"))
    resource = payload["resource"]
    threads = (
        f"{api.url}/_apis/git/repositories/{repo.id}/pullRequests/{pull.id}/threads/{thread.id}"
    )
    resource["comment"].update(
        id=comment.id,
        content=text,
        author=_identity(api, person),
        publishedDate=published.isoformat().replace("+00:00", "Z"),
    )
    resource["comment"]["_links"]["threads"]["href"] = threads
    resource["pullRequest"].update(
        pullRequestId=pull.id,
        title=pull.title,
        description=pull.description,
        sourceRefName=pull.source,
        targetRefName=pull.target,
        createdBy=api.ref(pull.created_by),
        repository=_repository(api, repo),
    )
    del resource["pullRequest"]["lastMergeSourceCommit"]
    return _envelope(payload)


def delivery(payload: dict[str, Any], **auth: Any) -> Delivery:
    body = json.dumps(payload).encode()
    return Delivery("/webhooks/azuredevops", body, headers_for(**auth))


def push(api: AzureDevOpsAPI, repo: Repo, ref: str, after: str, person: Person) -> dict[str, Any]:
    """The recorded `git.push` made to say `ref` is now at `after`, pushed by `person`."""
    payload = copy.deepcopy(load("git.push__default_branch"))
    resource = payload["resource"]
    resource["refUpdates"] = [{"name": ref, "oldObjectId": "1" * 40, "newObjectId": after}]
    resource["repository"] = _repository(api, repo)
    resource["pushedBy"] = _identity(api, person)
    return _envelope(payload)
