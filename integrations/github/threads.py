"""Resolving a pull request's review thread. GitHub's REST API cannot: only GraphQL's
`resolveReviewThread` does, by the thread's node id, which REST never shows. The thread is found
among the pull request's `reviewThreads` by its first comment, the REST comment the bot replied
to. https://docs.github.com/graphql/reference/mutations#resolvereviewthread
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from integrations.github.client import GitHubClient, split_repo
from resolver.contract.errors import PermanentCallbackError

MAX_PAGES: Final = 20  # of 100 threads each: more than any review the bot takes
# `fullDatabaseId` (a BigInt, sent as a string) rather than `databaseId`, which GitHub deprecated
# because it overflows on 64-bit ids.
THREADS_QUERY: Final = """
query ReviewThreads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes { id isResolved comments(first: 1) { nodes { fullDatabaseId } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""
RESOLVE_MUTATION: Final = """
mutation ResolveThread($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


def resolve_review_thread(client: GitHubClient, repo: str, number: int, root_id: int) -> bool:
    """Resolve the thread started by review comment `root_id`; False when it already was."""
    found = find_thread(client, repo, number, root_id)
    if found is None:
        raise PermanentCallbackError(f"no review thread of #{number} starts with comment {root_id}")
    thread_id, resolved = found
    if resolved:
        return False
    client.graphql("resolveReviewThread", RESOLVE_MUTATION, {"threadId": thread_id})
    return True


def find_thread(
    client: GitHubClient, repo: str, number: int, root_id: int
) -> tuple[str, bool] | None:
    """The node id and resolved state of the thread whose first comment is `root_id`."""
    owner, name = split_repo(repo)
    variables: dict[str, Any] = {"owner": owner, "name": name, "number": number, "after": None}
    for _ in range(MAX_PAGES):
        data = client.graphql("reviewThreads", THREADS_QUERY, variables)
        threads = _threads_of(data)
        for node in threads.get("nodes") or ():
            if isinstance(node, Mapping) and _first_comment_id(node) == root_id:
                return str(node["id"]), node.get("isResolved") is True
        page = threads.get("pageInfo") or {}
        if not page.get("hasNextPage"):
            return None
        variables["after"] = page.get("endCursor")
    return None


def resolved_roots(client: GitHubClient, repo: str, number: int) -> frozenset[int]:
    """The first comments of the pull request's resolved threads (REST ids): a thread a person
    resolved is done, whoever spoke last in it."""
    owner, name = split_repo(repo)
    variables: dict[str, Any] = {"owner": owner, "name": name, "number": number, "after": None}
    found: set[int] = set()
    for _ in range(MAX_PAGES):
        threads = _threads_of(client.graphql("reviewThreads", THREADS_QUERY, variables))
        for node in threads.get("nodes") or ():
            if isinstance(node, Mapping) and node.get("isResolved") is True:
                root = _first_comment_id(node)
                if root is not None:
                    found.add(root)
        page = threads.get("pageInfo") or {}
        if not page.get("hasNextPage"):
            break
        variables["after"] = page.get("endCursor")
    return frozenset(found)


def _threads_of(data: Mapping[str, Any]) -> Mapping[str, Any]:
    pull = ((data.get("repository") or {}).get("pullRequest")) or {}
    threads = pull.get("reviewThreads")
    return threads if isinstance(threads, Mapping) else {}


def _first_comment_id(thread: Mapping[str, Any]) -> int | None:
    comments = (thread.get("comments") or {}).get("nodes") or []
    first = comments[0] if comments and isinstance(comments[0], Mapping) else {}
    value = first.get("fullDatabaseId")
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else None
