"""Rows written before the typed triggers: a job's `trigger` column as a flat dict, read into
the new shape (`kind`, `v`, the typed fields, the provider's `part`) for `read_trigger`. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import JsonValue

from resolver.contract.trigger_base import VERSION, JsonObject, TriggerError

# The flat dict's keys that are typed fields; every other key is the provider's part.
_GENERIC: Final = frozenset(
    {
        "repo",
        "clone_url",
        "default_branch",
        "number",
        "is_pull_request",
        "title",
        "body",
        "url",
        "label",
        "assignee",
        "head_ref",
        "head_sha",
        "base_ref",
        "review_batch",
        "ci",
        "base_push",
        "options",
        "branch",
        "schedule_id",
        "run_id",
        "schedule",
        "forge_name",
        "provider",
        "event",
        "delivery",
        "conversation_key",
        "sender",
        "is_followup",
        "previous_job_id",
        "rerun_of",
        "forge",
        # A notice's own entries beside its trigger: the request it holds, its private part.
        "request",
        "private",
    }
)
# What only the older shape names, as this reader of it must: the keys by which a provider
# reached its repository or site (GitHub's installation, GitLab's project, Jira's site,
# Linear's organization, Slack's team); the forges whose number or kind had its own name
# (GitLab's `iid` and `noteable_type`); and the trackers' ticket keys.
_REACH: Final = frozenset({"installation_id", "project_id", "site", "organization_id", "team_id"})
_LEGACY_NUMBER: Final = ("number", "iid")
_LEGACY_TICKET: Final = ("issue_key", "issue_identifier", "issue_id")


def legacy_trigger(data: Mapping[str, object]) -> JsonObject:
    """The new shape of a flat trigger dict (as rows were written before `kind` and `v`)."""
    common: JsonObject = {
        "v": VERSION,
        "title": _text(data.get("title")),
        "body": _text(data.get("body")),
        "url": _text(data.get("url")) or _text(data.get("html_url")),
        "label": _text(data.get("label")),
        "part": {k: _json(v) for k, v in data.items() if k not in _GENERIC | _REACH},
        "reach": {k: _json(v) for k, v in data.items() if k in _REACH},
        "origin": _origin(data),
        "planned": _json(data.get("forge")) if isinstance(data.get("forge"), Mapping) else None,
    }
    return {**common, **_legacy_kind(data)}


def _legacy_kind(data: Mapping[str, object]) -> JsonObject:
    if "schedule_id" in data:
        return _legacy_schedule(data)
    repo = _text(data.get("repo"))
    number = next((n for k in _LEGACY_NUMBER if (n := _int(data.get(k))) is not None), None)
    if repo is not None and isinstance(data.get("base_push"), Mapping):
        return {"kind": "base_push", "repo": _repository(data), "push": _json(data["base_push"])}
    if repo is not None and number is not None:
        return _legacy_forge(data, number)
    ticket = next((t for k in _LEGACY_TICKET if (t := _text(data.get(k)))), None)
    if ticket is not None:
        return {"kind": "tracker_ticket", "key": ticket}
    options = data.get("options")
    return {"kind": "chat_thread", "options": _json(options) if isinstance(options, dict) else {}}


def _legacy_forge(data: Mapping[str, object], number: int) -> JsonObject:
    fields: JsonObject = {
        "repo": _repository(data),
        "number": number,
        "comment_id": _int(data.get("comment_id")) or _int(data.get("note_id")),
        "assignee": _text(data.get("assignee")),
    }
    pull = data.get("is_pull_request") is True or data.get("noteable_type") == "merge_request"
    if not pull:
        return {**fields, "kind": "forge_issue"}
    fields |= {
        "head_ref": _text(data.get("head_ref")) or _text(data.get("source_branch")),
        "head_sha": _text(data.get("head_sha")),
        "base_ref": _text(data.get("base_ref")) or _text(data.get("target_branch")),
    }
    if isinstance(data.get("ci"), Mapping):
        return {**fields, "kind": "ci_failure", "check": _json(data["ci"])}
    if data.get("review_batch"):
        return {**fields, "kind": "review_batch", "review_id": _int(data.get("review_id"))}
    return {**fields, "kind": "pull_request"}


def _legacy_schedule(data: Mapping[str, object]) -> JsonObject:
    if _int(data.get("schedule_id")) is None:
        raise TriggerError("a stored trigger fits no kind: a schedule run names no schedule")
    return {
        "kind": "schedule_run",
        "schedule_id": _int(data.get("schedule_id")),
        "run_id": _int(data.get("run_id")),
        "schedule": _text(data.get("schedule")) or "",
        "forge_name": _text(data.get("forge_name")) or "",
        "repo": _text(data.get("repo")) or "",
    }


def _repository(data: Mapping[str, object]) -> JsonObject:
    return {
        "full_name": _text(data.get("repo")),
        "clone_url": _text(data.get("clone_url")),
        "default_branch": _text(data.get("default_branch")),
    }


def _origin(data: Mapping[str, object]) -> JsonObject:
    sender = data.get("sender")
    sender_id = sender.get("id") if isinstance(sender, Mapping) else None
    return {
        "provider": _text(data.get("provider")),
        "event": _text(data.get("event")),
        "delivery": _text(data.get("delivery")),
        "conversation_key": _text(data.get("conversation_key")),
        "sender": (
            {"id": str(sender_id), "login": _text(sender.get("login"))}
            if isinstance(sender, Mapping) and sender_id is not None
            else None
        ),
        "is_followup": data.get("is_followup") is True,
        "previous_job_id": _int(data.get("previous_job_id")),
        "rerun_of": _int(data.get("rerun_of")),
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _json(value: object) -> JsonValue:
    """A value read from stored JSON, as JSON (anything else becomes its text)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return str(value)
