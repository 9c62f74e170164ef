"""The ingress tests use the webhook fixtures the provider tests use."""

from tests.integrations.conftest import *  # noqa: F403 - pytest finds the fixtures by name
