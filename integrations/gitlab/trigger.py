"""GitLab's own part of a job's trigger (`TaskTrigger.part` and `.reach`): what only GitLab's
side reads, decoded from the stored JSON here."""

from __future__ import annotations

from pydantic import JsonValue

from resolver.contract.inbound import VendorModel
from resolver.contract.triggers import TaskTrigger


class GitLabPart(VendorModel):
    """The note that asked: its type and discussion, and where on the diff it was."""

    note_type: str | None = None
    discussion_id: str | None = None
    mention_discussion: str | None = None
    """A review batch's mention: the discussion it was written in (its status goes elsewhere)."""
    position: JsonValue = None
    line_code: str | None = None
    web_url: str | None = None


class GitLabReach(VendorModel):
    project_id: int | None = None


def part_of(trigger: TaskTrigger) -> GitLabPart:
    return GitLabPart.model_validate(trigger.part)


def project_id_of(trigger: TaskTrigger) -> int | None:
    return GitLabReach.model_validate(trigger.reach).project_id
