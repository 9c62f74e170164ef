"""Signing in with Microsoft Entra ID against the stand-in's tenant: the code flow gives a
token, which names the person's Azure DevOps identity (the id service hooks send), tells what
they may do on a repository with their own permissions, and renews with its refresh token;
a used refresh token is refused."""

from __future__ import annotations

import httpx
import pytest
from authlib.integrations.httpx_client import OAuth2Client
from cryptography.fernet import Fernet

from integrations.azuredevops.signin import SIGN_IN
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.oauth import TENANT
from integrations.azuredevops.standin.state import Repo
from integrations.registry import settings as compose
from resolver.contract.signin import RefreshRefusedError
from resolver.core.settings import Settings
from tests.integrations.azuredevops.conftest import REPO
from tests.integrations.azuredevops.test_client import conforms
from tests.integrations.signin import CALLBACK, CLIENT_ID, SECRET, sign_in

KEY = Fernet.generate_key().decode()


def _settings(api: AzureDevOpsAPI) -> Settings:
    return compose(
        {
            "azuredevops_url": api.url,
            "azuredevops_tenant": TENANT,
            "azuredevops_client_id": CLIENT_ID,
            "azuredevops_client_secret": SECRET,
            "azuredevops_login_url": api.login_url,
            "azuredevops_profile_url": api.origin,
            "secret_keys": KEY,
        },
        env_file=False,
    )


def test_a_person_signs_in_and_is_their_azure_devops_identity(
    azure_api: AzureDevOpsAPI, repo: Repo
) -> None:
    settings = _settings(azure_api)
    alice = azure_api.add_person("alice@contoso.com")
    azure_api.entra.add_app(CLIENT_ID, SECRET, CALLBACK)
    azure_api.entra.signed_in = alice.id
    oauth = SIGN_IN.client(settings)
    assert oauth is not None and oauth.scope.endswith("offline_access")
    with (
        OAuth2Client(
            oauth.client_id,
            oauth.client_secret,
            redirect_uri=CALLBACK,
            scope=oauth.scope,
            token_endpoint_auth_method="client_secret_post",
            trust_env=False,
        ) as client,
        httpx.Client(trust_env=False) as http,
    ):
        _, token = sign_in(http, client, oauth.authorize_url, oauth.access_token_url)

    person = SIGN_IN.person(settings, token["access_token"])
    assert (person.provider, person.external_id, person.login) == ("azuredevops", alice.id, "alice")
    assert SIGN_IN.access(settings, token["access_token"], REPO).push
    assert not SIGN_IN.access(settings, token["access_token"], "Widgets/nothing").read

    renewed = SIGN_IN.refresh(settings, token["refresh_token"])
    assert SIGN_IN.person(settings, renewed.access_token).external_id == alice.id
    with pytest.raises(RefreshRefusedError):
        SIGN_IN.refresh(settings, token["refresh_token"])  # used up
    conforms(azure_api)


def test_sign_in_is_off_without_a_tenant(azure_api: AzureDevOpsAPI) -> None:
    settings = compose({"azuredevops_client_id": CLIENT_ID, "secret_keys": KEY}, env_file=False)
    assert SIGN_IN.client(settings) is None
