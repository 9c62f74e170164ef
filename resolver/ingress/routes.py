"""The webhook routes that resolver.app mounts: `POST /webhooks/<provider>`."""

from __future__ import annotations

from typing import Final

from starlette.routing import BaseRoute, Route

from integrations.github import integration as github
from integrations.gitlab import integration as gitlab
from integrations.jira import integration as jira
from integrations.linear import integration as linear
from integrations.slack import integration as slack
from resolver.contract.inbound import Integration
from resolver.ingress.endpoint import endpoint

INTEGRATIONS: Final[tuple[Integration, ...]] = (github, gitlab, slack, jira, linear)


def routes() -> list[BaseRoute]:
    """One POST route per integration; a provider without a secret answers 404."""
    return [
        Route(f"/webhooks/{item.name}", endpoint(item), methods=["POST"], name=item.name)
        for item in INTEGRATIONS
    ]
