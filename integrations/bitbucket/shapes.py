"""What Bitbucket Cloud's answers hold, read by shape (integrations/toolkit/answers): a pull
request, a repository, a listing's page, a hook, a login; and a comment's content."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from integrations.toolkit import answers
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import PullInfo, RepoInfo


def fork_of(data: Mapping[str, Any]) -> str | None:
    """The fork a pull request comes from (its source repository's full name), or None when
    its branch is one of the destination repository's."""
    source = (data.get("source") or {}).get("repository") or {}
    destination = (data.get("destination") or {}).get("repository") or {}
    key = "uuid" if source.get("uuid") and destination.get("uuid") else "full_name"
    if not source or not destination or source.get(key) == destination.get(key):
        return None
    return str(source.get("full_name") or "") or None


def pull_info(answer: object, fork_clone: str | None = None) -> PullInfo:
    """A pull request; one from a fork with `fork_clone`, the fork's clone link: Bitbucket
    Cloud keeps no copy of a fork's branch in the destination repository (no pull request
    refs), so its head is fetched from the fork itself."""
    data = answers.fields(answer)
    source, destination = data.get("source") or {}, data.get("destination") or {}
    author = data.get("author") or {}
    head = str((source.get("branch") or {}).get("name") or "")
    forked = fork_clone is not None and fork_of(data) is not None
    return PullInfo(
        number=int(data["id"]),
        url=str(((data.get("links") or {}).get("html") or {}).get("href") or ""),
        head=head,
        base=(destination.get("branch") or {}).get("name"),
        author=author.get("nickname") or author.get("display_name"),
        fetch_ref=f"refs/heads/{head}" if forked else None,
        fetch_from=fork_clone if forked else None,
    )


def text(body: str) -> dict[str, Any]:
    """A comment's or a description's content, as Markdown."""
    return {"content": {"raw": body}}


def page(answer: object) -> tuple[list[dict[str, Any]], object]:
    """A listing's values, and its `next` link."""
    page = answers.fields(answer)
    return answers.items(page.get("values") or []), page.get("next")


def identifier(answer: object) -> int:
    return int(answers.fields(answer)["id"])


def hook_uuid(answer: object) -> str:
    return answers.text(answers.fields(answer)["uuid"])


def login(answer: object) -> str:
    data = answers.fields(answer)
    return answers.text(data.get("nickname") or data.get("display_name") or data.get("uuid"))


def repo_info(answer: object, repo: str) -> RepoInfo:
    data = answers.fields(answer)
    links = data.get("links") or {}
    clone = next((c["href"] for c in links.get("clone") or [] if c.get("name") == "https"), None)
    if not clone:
        raise PermanentCallbackError(f"Bitbucket gives no HTTPS clone link for {repo}")
    main = (data.get("mainbranch") or {}).get("name")
    return RepoInfo(
        full_name=answers.text(data["full_name"]),
        clone_url=answers.text(clone),
        default_branch=str(main or "main"),
        web_url=(links.get("html") or {}).get("href"),
    )


def kept(answer: object) -> dict[str, Any]:
    """What a pull request's PUT must send back as it is, or it is dropped: its title, its
    draft flag and its reviewers."""
    now = answers.fields(answer)
    return {
        "title": now.get("title") or "",
        "draft": bool(now.get("draft")),
        "reviewers": [{"uuid": r["uuid"]} for r in now.get("reviewers") or [] if "uuid" in r],
    }
