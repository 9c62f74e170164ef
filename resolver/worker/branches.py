"""Naming and commit messages for the bot's branches. Pure."""

from __future__ import annotations

import re
from typing import Final

from resolver.contract.triggers import BOT_BRANCH_PREFIX
from resolver.core.sanitize import without_closing_keywords

BRANCH_PREFIX: Final = BOT_BRANCH_PREFIX
MAX_SLUG = 40


def slugify(text: str) -> str:
    """Lower-case words joined by dashes, at most MAX_SLUG characters, never empty."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > MAX_SLUG:
            break
        slug = candidate
    return slug or "change"


def build_branch_name(number: int | str | None, title: str | None, job_id: int) -> str:
    """`resolver/<number>-<slug>`; jobs without an issue number use their job id."""
    key = str(number) if number not in (None, "") else f"job{job_id}"
    return f"{BRANCH_PREFIX}{key}-{slugify(title or '')}"


def build_commit_message(title: str, summary: str, requester: str | None, email: str | None) -> str:
    """The bot's commit: a subject line, the agent's summary (closing no issue it names), and
    Co-authored-by the requester."""
    subject = title.strip().splitlines()[0][:72] if title.strip() else "Resolver change"
    lines = [subject, "", without_closing_keywords(summary.strip())]
    if requester:
        lines += ["", f"Co-authored-by: {requester} <{email or requester + '@users.noreply'}>"]
    return "\n".join(lines).strip() + "\n"
