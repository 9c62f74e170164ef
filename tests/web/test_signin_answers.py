"""A provider's answer about the person signing in of the wrong shape (a page served as 200, a
list, an id of null or empty, a field of another kind) is a sign-in to try again: one of the
errors the sign-in and proof pages answer with their "please try again" page, never a
TypeError or AttributeError ending as a 500, and never a Person whose identity is 'None'."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cryptography.fernet import Fernet

from integrations.azuredevops.signin import SIGN_IN as AZURE
from integrations.bitbucket import signin as bitbucket
from integrations.forgejo import signin as forgejo
from integrations.github import signin as github
from integrations.gitlab import signin as gitlab
from integrations.jira.signin import PROOF as JIRA
from integrations.linear.signin import PROOF as LINEAR
from integrations.registry import settings as compose
from integrations.slack.signin import PROOF as SLACK
from resolver.contract.signin import ForgeUnreachableError, Person, SignInError
from resolver.core.settings import Settings
from tests.support.serving import served_answer

KEY = Fernet.generate_key().decode()
TRY_AGAIN = (SignInError, ForgeUnreachableError)  # what the pages say "please try again" for
PAGE = b"<html>maintenance</html>"
WHO: dict[str, tuple[str, Callable[[Settings, str], Person]]] = {
    "jira": ("atlassian_api_url", JIRA.whoami),
    "linear": ("linear_api_url", LINEAR.whoami),
    "slack": ("slack_api_url", SLACK.whoami),
    "azuredevops": ("azuredevops_profile_url", AZURE.person),
    "github": ("github_api_url", github.person),
    "gitlab": ("gitlab_url", gitlab.person),
    "forgejo": ("forgejo_url", forgejo.person),
    "bitbucket": ("bitbucket_api_url", bitbucket.person),
}
ANSWERS = [
    ("jira", PAGE),
    ("jira", b"[]"),
    ("jira", b'{"account_id": null, "name": "Mallory"}'),
    ("jira", b'{"account_id": 7}'),
    ("linear", b"[]"),
    ("linear", b'{"data": "x"}'),
    ("linear", b'{"data": {"viewer": []}}'),
    ("linear", b'{"data": {"viewer": {"id": "", "name": "Mallory"}}}'),
    ("slack", b"[5]"),
    ("slack", b'{"ok": true, "https://slack.com/user_id": null, "name": "Mallory"}'),
    ("slack", b'{"ok": true, "https://slack.com/user_id": "U1", "https://slack.com/team_id": 5}'),
    ("azuredevops", b'{"id": null, "coreAttributes": {}}'),
    ("azuredevops", b'{"id": "", "displayName": "Mallory"}'),
    ("azuredevops", b'{"id": "p1", "coreAttributes": ["EmailAddress"]}'),
    ("github", b'{"id": null, "login": "mallory"}'),
    ("github", b'{"login": "mallory"}'),
    ("github", b'{"id": "", "login": "mallory"}'),
    ("github", b'{"id": true, "login": "mallory"}'),
    ("github", b'{"id": 7, "login": null}'),
    ("gitlab", b'{"id": null, "username": "mallory"}'),
    ("gitlab", b'{"id": "7", "username": "mallory"}'),
    ("gitlab", b'{"id": 7, "username": []}'),
    ("forgejo", b'{"id": null, "login": "mallory"}'),
    ("forgejo", b'{"id": 0, "login": "mallory"}'),
    ("forgejo", b'{"id": 7, "login": ""}'),
    ("bitbucket", b'{"uuid": null, "nickname": "mallory"}'),
    ("bitbucket", b'{"uuid": "", "nickname": "mallory"}'),
    ("bitbucket", b'{"nickname": "mallory"}'),
    ("bitbucket", b'{"uuid": "{u1}", "nickname": 7}'),
]


@pytest.mark.parametrize(("provider", "answer"), ANSWERS)
def test_an_account_answer_of_the_wrong_shape_is_a_sign_in_to_try_again(
    provider: str, answer: bytes
) -> None:
    setting, who = WHO[provider]
    with served_answer(answer) as url:
        settings = compose({setting: url, "secret_keys": KEY}, env_file=False)
        with pytest.raises(TRY_AGAIN):
            who(settings, "token-of-the-person")


@pytest.mark.parametrize(
    "answer",
    [PAGE, b'{"id": "r1", "project": []}', b'{"id": null, "project": {"id": "p1"}}', b"[]"],
)
def test_a_repository_answer_of_the_wrong_shape_is_an_answer_to_try_again(answer: bytes) -> None:
    with served_answer(answer) as url:
        settings = compose({"azuredevops_url": url, "secret_keys": KEY}, env_file=False)
        with pytest.raises(ForgeUnreachableError, match="not its API's"):
            AZURE.access(settings, "token-of-the-person", "Widgets/widgets")


ACCESS: dict[str, tuple[str, Callable[[Settings, str, str], object]]] = {
    "github": ("github_api_url", github.access),
    "gitlab": ("gitlab_url", gitlab.access),
    "forgejo": ("forgejo_url", forgejo.access),
    "bitbucket": ("bitbucket_api_url", bitbucket.access),
}


@pytest.mark.parametrize(
    ("provider", "answer"),
    [
        ("github", b'{"id": 7, "login": "ada", "permissions": ["push"]}'),
        ("gitlab", b'{"id": 7, "username": "ada", "permissions": ["x"]}'),
        ("gitlab", b'{"id": 7, "permissions": {"project_access": {"access_level": "x"}}}'),
        ("forgejo", b'{"id": 7, "login": "ada", "permission": 7}'),
        ("bitbucket", b'{"uuid": "{u1}", "values": {"permission": "write"}}'),
        ("bitbucket", b'{"uuid": "{u1}", "values": ["write"]}'),
    ],
)
def test_a_forge_repository_answer_of_the_wrong_shape_is_an_answer_to_try_again(
    provider: str, answer: bytes
) -> None:
    setting, access = ACCESS[provider]
    with served_answer(answer) as url:
        settings = compose({setting: url, "secret_keys": KEY}, env_file=False)
        with pytest.raises(ForgeUnreachableError, match="not its API's"):
            access(settings, "token-of-the-person", "acme/widgets")
