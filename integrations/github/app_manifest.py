"""What Resolver's GitHub App needs, named once: the manifest `/setup` sends and the preflight
check against `GET /app` both read it. Exactly what the README lists, no more.
https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
"""

from __future__ import annotations

from typing import Final

PERMISSIONS: Final[dict[str, str]] = {
    "contents": "write",  # push the bot's branch
    "pull_requests": "write",  # its draft pull requests; reply on reviews, resolve threads
    "issues": "write",  # the 👀, the status comment, labels and assignment as triggers
    "metadata": "read",  # always granted; named so the manifest says everything
    "checks": "read",  # a red check on its own pull request: the check run and annotations
    "actions": "read",  # ... and the failed Actions job's log
}

EVENTS: Final[tuple[str, ...]] = (
    "issue_comment",
    "issues",
    "pull_request_review",
    "pull_request_review_comment",
    "check_run",
    "push",  # the default branch moved: `conflicts: fix` updates the bot's branches
    "pull_request",  # the bot's own pull requests (github/pulls.py); auto-reviews (`review:`)
)
"""The webhook events the App subscribes to: those `routes.ROUTES` acts on."""
