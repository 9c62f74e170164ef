"""End-to-end fixtures: the GitHub stand-in and its git server, reused from the GitHub edge."""

from tests.e2e.slack_flow import slack_api
from tests.integrations.github.conftest import app_key, git_server, github_api, key_file

__all__ = ["app_key", "git_server", "github_api", "key_file", "slack_api"]
