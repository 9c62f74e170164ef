"""What Azure DevOps's answers hold, read by shape (integrations/toolkit/answers): a pull
request, a repository and its ids, a list's values, an identity's descriptor and the bits an
access list allows it, a build's plan and its failed records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from integrations.toolkit.answers import fields, items, text
from resolver.contract.outbound import PullInfo, RepoInfo


def branch_of(ref: str | None) -> str:
    return (ref or "").removeprefix("refs/heads/")


def pull_info(answer: object, web: str) -> PullInfo:
    """`web`: the repository's web address, under which a pull request's page is."""
    data = fields(answer)
    author = data.get("createdBy") or {}
    number = int(data["pullRequestId"])
    # A fork's branch (`forkSource`) is not in the target repository. Azure Repos keeps there
    # only its merge of the pull request, `refs/pull/N/merge`, whose second parent is the
    # source's head (`lastMergeSourceCommit`): the head is fetched through it.
    # https://learn.microsoft.com/rest/api/azure/devops/git/pull-requests/get-pull-request
    forked = bool(data.get("forkSource"))
    source = (data.get("lastMergeSourceCommit") or {}).get("commitId")
    return PullInfo(
        number=number,
        url=f"{web}/pullrequest/{number}",
        head=branch_of(data.get("sourceRefName")),
        base=branch_of(data.get("targetRefName")) or None,
        author=str(author.get("uniqueName") or "").split("@", 1)[0] or None,
        fetch_ref=f"refs/pull/{number}/merge" if forked else None,
        fetch_commit=str(source) if forked and source else None,
    )


def identifier(answer: object) -> int:
    """A new object's numeric `id`."""
    return int(fields(answer)["id"])


def values(answer: object) -> list[dict[str, Any]]:
    """The objects of a list answer, which Azure DevOps wraps in `{"count", "value"}`."""
    return items(fields(answer)["value"])


def comment_items(answer: object) -> list[dict[str, Any]]:
    return items(fields(answer)["comments"])


def repository_of(answer: object) -> RepoInfo:
    data = fields(answer)
    return RepoInfo(
        full_name=f"{text(data['project']['name'])}/{text(data['name'])}",
        clone_url=text(data["remoteUrl"]),
        default_branch=branch_of(data.get("defaultBranch")) or "main",
        web_url=data.get("webUrl"),
    )


def ids_of(answer: object) -> tuple[str, str]:
    data = fields(answer)
    return text(data["project"]["id"]), text(data["id"])


def descriptor_of(answer: object) -> str | None:
    found = fields(answer).get("value") if isinstance(answer, dict) else answer
    listed = items(found or [])
    return text(listed[0]["descriptor"]) if listed and listed[0] else None


def allowed_bits(acl: Mapping[str, Any], descriptor: str) -> int:
    """The permission bits an access list allows `descriptor` (effective, when it says)."""
    ace = (acl.get("acesDictionary") or {}).get(descriptor) or {}
    info = ace.get("extendedInfo") or {}
    return int(info.get("effectiveAllow", ace.get("allow", 0)) or 0)


def plan_of(answer: object) -> str | None:
    plan = (fields(answer).get("orchestrationPlan") or {}).get("planId")
    return str(plan) if plan else None


def failed_of(answer: object) -> list[dict[str, Any]]:
    """A timeline's failed records, in order."""
    records = items(fields(answer).get("records") or [])
    failed = (record for record in records if record.get("result") == "failed")
    return sorted(failed, key=lambda record: int(record.get("order") or 0))
