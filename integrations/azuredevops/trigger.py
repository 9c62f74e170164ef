"""Azure DevOps's own part of a job's trigger (`TaskTrigger.part`): what only its side reads,
decoded from the stored JSON here. Its `reach` stays empty: Resolver talks to the one
configured organisation (`RESOLVER_AZUREDEVOPS_URL`)."""

from __future__ import annotations

from resolver.contract.inbound import VendorModel
from resolver.contract.triggers import TaskTrigger


class AzurePart(VendorModel):
    """Where the trigger was: a pull request's thread, or a work item in a project."""

    repository_id: str | None = None
    project: str | None = None
    """The project's name: a work item's default repository is set per project."""
    thread_id: int | None = None
    """The pull request thread of the comment that asked (its comment is liked)."""
    reply_thread: int | None = None
    """A review thread a review batch replies in (`ReviewThread.where`)."""
    work_item: int | None = None


def part_of(trigger: TaskTrigger) -> AzurePart:
    return AzurePart.model_validate(trigger.part)
