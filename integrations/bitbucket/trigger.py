"""Bitbucket's own part of a job's trigger (`TaskTrigger.part`): what only Bitbucket's side
reads, decoded from the stored JSON here. Its `reach` says which product sent the event: the
REST 2.0 client serves Bitbucket Cloud only, so Data Center's events are refused before a job
is made (`routes`); a job stored before that may still name Data Center, and its replies are
refused with a clear error."""

from __future__ import annotations

from typing import Final, Literal

from resolver.contract.inbound import VendorModel
from resolver.contract.triggers import TaskTrigger

UNKNOWN_PULL: Final = 0
"""The number of a red check's pull request: a commit status names its branch, not its pull
request; the bot's open pull request from that branch is looked up when the job acts."""
CLOUD: Final = "cloud"
DATA_CENTER: Final = "datacenter"


class BitbucketPart(VendorModel):
    """Where in the pull request the trigger was."""

    inline_path: str | None = None
    """The file of an inline comment (a comment on a line of the diff)."""
    parent_id: int | None = None
    """The comment an answer in a thread replies to."""


class BitbucketReach(VendorModel):
    product: Literal["cloud", "datacenter"] = CLOUD


def part_of(trigger: TaskTrigger) -> BitbucketPart:
    return BitbucketPart.model_validate(trigger.part)


def reach_of(trigger: TaskTrigger) -> BitbucketReach:
    return BitbucketReach.model_validate(trigger.reach)
