"""Comment bodies as plain text with Markdown-style code and quotes, so the shared mention
matcher can read them: Atlassian Document Format (Cloud) and wiki markup (Server, API v2)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from resolver.contract.inbound import Policy

_MAX_DEPTH = 64  # ADF nests a handful of levels; deeper input is not a real document
_ACCOUNT_MENTION = re.compile(r"\[~(?:accountid:)?([^\]\s]+)\]")


def comment_text(body: str | Mapping[str, Any] | None, policy: Policy) -> str:
    """The body as text in which a mention of the bot's account reads `@bot_name`."""
    if isinstance(body, Mapping):
        return adf_text(body, policy, 0).strip()
    return wiki_text(body or "", policy)


def wiki_text(text: str, policy: Policy) -> str:
    """Wiki markup with `[~accountid:…]` / `[~username]` of the bot written `@bot_name`."""

    def swap(found: re.Match[str]) -> str:
        return f"@{policy.bot_name}" if _is_bot(found.group(1), None, policy) else found.group(0)

    return _ACCOUNT_MENTION.sub(swap, text)


def adf_text(node: Mapping[str, Any], policy: Policy, depth: int) -> str:
    """One ADF node as text: code blocks fenced, quotes prefixed, mentions spelled out."""
    kind = node.get("type")
    if depth > _MAX_DEPTH:
        return ""
    if kind == "text":
        return _text_node(node)
    if kind == "mention":
        attrs = node.get("attrs")
        account, text = (
            (attrs.get("id"), str(attrs.get("text") or ""))
            if isinstance(attrs, Mapping)
            else (None, "")
        )
        return f"@{policy.bot_name}" if _is_bot(account, text, policy) else text
    if kind == "hardBreak":
        return "\n"
    children = node.get("content")
    inner = "".join(
        adf_text(child, policy, depth + 1)
        for child in (children if isinstance(children, list) else [])
        if isinstance(child, Mapping)
    )
    if kind == "codeBlock":
        return f"\n```\n{inner}\n```\n"
    if kind == "blockquote":
        return "".join(f"> {line}\n" for line in inner.splitlines())
    if kind in ("paragraph", "heading", "listItem", "panel", "tableRow"):
        return inner + "\n"
    return inner


def _text_node(node: Mapping[str, Any]) -> str:
    text = str(node.get("text") or "")
    marks = node.get("marks")
    is_code = isinstance(marks, list) and any(
        isinstance(mark, Mapping) and mark.get("type") == "code" for mark in marks
    )
    return f"`{text}`" if is_code and text else text


def _is_bot(account: object, text: str | None, policy: Policy) -> bool:
    if isinstance(account, str) and (
        account in policy.bot_account_ids or account.lower() == policy.bot_name.lower()
    ):
        return True
    return (text or "").lstrip("@").strip().lower() == policy.bot_name.lower()
