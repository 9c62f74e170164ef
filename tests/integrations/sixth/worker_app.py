"""The Celery app of the sixth-provider worker test: Resolver's own app, in a process whose
registry lists the sixth provider as its line in `integrations/registry.py` would."""

from __future__ import annotations

from integrations import registry
from resolver import tasks  # noqa: F401 - defines the tasks
from resolver.broker.celery_app import get_celery
from tests.integrations.sixth.provider import PROVIDER

registry.INSTALLED = (*registry.INSTALLED, PROVIDER)  # type: ignore[misc]
app = get_celery()
