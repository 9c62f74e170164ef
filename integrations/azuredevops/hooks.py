"""Azure DevOps service-hook subscriptions through the REST 7.1 API: the events Resolver
routes, and the Web Hooks subscription that sends each to Resolver (what `setup` registers).
https://learn.microsoft.com/rest/api/azure/devops/hooks/subscriptions?view=azure-devops-rest-7.1
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

from integrations.azuredevops.client import AzureDevOpsClient
from integrations.azuredevops.shapes import values
from integrations.toolkit.answers import fields, text

# The events Resolver routes (`routes.ROUTES`), with the resource version each is sent at.
HOOK_EVENTS: Final = (
    ("ms.vss-code.git-pullrequest-comment-event", "2.0"),
    ("git.pullrequest.created", "1.0"),
    ("git.pullrequest.updated", "1.0"),
    ("git.push", "1.0"),
    ("workitem.commented", "1.0"),
    ("workitem.updated", "1.0"),
    ("build.complete", "2.0"),
)
_GIT_EVENTS: Final = frozenset(name for name, _ in HOOK_EVENTS if name.startswith(("git.", "ms.")))


def subscription_form(
    event: str,
    version: str,
    url: str,
    credentials: tuple[str, str, str],
    project_id: str,
    repository_id: str,
) -> dict[str, Any]:
    """A Web Hooks subscription to `url` for one event of one project (a Git event of one
    repository), sending the basic-auth user and password and the secret header."""
    user, password, header = credentials
    publisher = {"projectId": project_id}
    if event in _GIT_EVENTS:
        publisher["repository"] = repository_id
    if event == "build.complete":
        publisher["buildStatus"] = "Failed"
    return {
        "publisherId": "tfs",
        "eventType": event,
        "resourceVersion": version,
        "consumerId": "webHooks",
        "consumerActionId": "httpRequest",
        "publisherInputs": publisher,
        "consumerInputs": {
            "url": url,
            "basicAuthUsername": user,
            "basicAuthPassword": password,
            "httpHeaders": f"X-Resolver-Secret:{header}",
            "resourceDetailsToSend": "all",
            "messagesToSend": "none",
            "detailedMessagesToSend": "none",
        },
    }


@dataclass(frozen=True)
class Subscription:
    """A service-hook subscription as setup compares it: the event and project it is for and
    the URL it posts to (as given), and its id."""

    id: str
    event: object
    project: object
    url: object


class HookClient(AzureDevOpsClient):
    """The service-hook subscriptions of the organisation (what `/setup` registers)."""

    def project_and_repository(self, full_name: str) -> tuple[str, str]:
        return self.repository_ids(full_name)

    def subscriptions(self) -> list[Subscription]:
        url = f"{self._base}/_apis/hooks/subscriptions"
        params = {"publisherId": "tfs", "consumerId": "webHooks"}
        return self._json("GET", "GET hooks/subscriptions", url, _subscriptions, params=params)

    def create_subscription(self, form: Mapping[str, Any]) -> str:
        url = f"{self._base}/_apis/hooks/subscriptions"
        return self._json("POST", "POST hooks/subscriptions", url, _subscription_id, json=form)

    def replace_subscription(self, subscription_id: str, form: Mapping[str, Any]) -> None:
        url = f"{self._base}/_apis/hooks/subscriptions/{quote(subscription_id, safe='')}"
        self._call("PUT", "PUT hooks/subscriptions/{subscriptionId}", url, json=form)


def _subscriptions(answer: object) -> list[Subscription]:
    return [
        Subscription(
            text(found["id"]),
            found.get("eventType"),
            fields(found.get("publisherInputs") or {}).get("projectId"),
            fields(found.get("consumerInputs") or {}).get("url"),
        )
        for found in values(answer)
    ]


def _subscription_id(answer: object) -> str:
    return text(fields(answer)["id"])
