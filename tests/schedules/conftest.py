"""The GitHub stand-in and its git server, for reading schedules files the way the beat does."""

from tests.integrations.github.conftest import app_key, git_server, github_api, key_file

__all__ = ["app_key", "git_server", "github_api", "key_file"]
