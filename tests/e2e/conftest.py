"""End-to-end fixtures: the GitHub stand-in and its git server (reused from the GitHub edge), the
GitLab and Slack stand-ins, and the forge a test runs against (tests/e2e/forges.py)."""

from tests.e2e.forges import forge
from tests.e2e.gitlab_flow import gitlab_api, gitlab_git
from tests.e2e.slack_flow import slack_api
from tests.integrations.azuredevops.flow import azure_git, azure_standin
from tests.integrations.bitbucket.flow import bitbucket_git, bitbucket_standin
from tests.integrations.forgejo.flow import forgejo_git, forgejo_standin
from tests.integrations.github.conftest import app_key, git_server, github_api, key_file

__all__ = [
    "app_key",
    "azure_git",
    "azure_standin",
    "bitbucket_git",
    "bitbucket_standin",
    "forge",
    "forgejo_git",
    "forgejo_standin",
    "git_server",
    "github_api",
    "gitlab_api",
    "gitlab_git",
    "key_file",
    "slack_api",
]
