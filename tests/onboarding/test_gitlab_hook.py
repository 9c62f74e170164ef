"""`resolver setup gitlab`: the project or group hook is registered with exactly the routed
events and two generated secrets, the secrets go to the vault, GitLab's test delivery passes our
own ingress, and a rotation makes the old token fail and the new one pass."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from integrations.gitlab.routes import ROUTES
from integrations.gitlab.standin.hooks import FIXTURES, GitLabHooksAPI, Hook, standard_signature
from integrations.standin.server import Reply, Routed
from resolver.cli.setup import app as setup_app
from resolver.contract.setup import SetupError
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from tests.onboarding.conftest import Live, ciphertexts, stored
from tests.support.serving import served_answer

OWNER_TOKEN = "glpat-owner-0123456789abcdef"
DEVELOPER_TOKEN = "glpat-developer-0123456789"
ROUTED_FLAGS = {
    "Note Hook": "note_events",
    "Confidential Note Hook": "confidential_note_events",
    "Issue Hook": "issues_events",
    "Confidential Issue Hook": "confidential_issues_events",
    "Merge Request Hook": "merge_requests_events",
    "Pipeline Hook": "pipeline_events",
    "Push Hook": "push_events",
}


@pytest.fixture
def gitlab(live: Live, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitLabHooksAPI]:
    api = GitLabHooksAPI()
    owner = api.add_token(OWNER_TOKEN, "olga")
    developer = api.add_token(DEVELOPER_TOKEN, "dev")
    project = api.add_project("group/widgets", clone_url=f"{api.url}/group/widgets.git")
    api.add_member(project, owner, 40)
    api.add_member(project, developer, 30)
    api.add_group("group", {owner: 50, developer: 30})
    live.set(monkeypatch, gitlab_url=api.url)
    yield api
    api.close()


def _only_hook(api: GitLabHooksAPI) -> Hook:
    assert len(api.hooks) == 1
    return next(iter(api.hooks.values()))


def _deliver(live: Live, token: str) -> int:
    """A Note Hook carrying `token`, as GitLab sends it, to our ingress."""
    body = (FIXTURES / "Note_Hook__on_issue.json").read_bytes()
    headers = {"X-Gitlab-Event": "Note Hook", "X-Gitlab-Token": token, "Idempotency-Key": token}
    answer = httpx.post(f"{live.url}/webhooks/gitlab", content=body, headers=headers)
    return answer.status_code


def test_a_project_hook_subscribes_the_routed_events_and_its_test_passes_our_ingress(
    gitlab: GitLabHooksAPI, live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    result = hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets")
    hook = _only_hook(gitlab)
    assert hook.url == f"{live.url}/webhooks/gitlab" and result.created
    assert {flag for flag, on in hook.as_json().items() if on is True and "events" in flag} == {
        ROUTED_FLAGS[key] for key in ROUTES
    }
    assert not hook.as_json()["tag_push_events"], "GitLab's other push events stay off"
    vault = stored()
    assert vault["gitlab_webhook_token"] == hook.token
    assert vault["gitlab_signing_token"] == hook.signing_token
    assert hook.signing_token and hook.signing_token.startswith("whsec_")
    assert all(hook.token not in c and hook.signing_token not in c for c in ciphertexts())
    assert result.tested and [d.status for d in gitlab.deliveries] == [204]
    assert "webhook-signature" in gitlab.deliveries[0].headers, "signed with the signing token"
    assert hook.token not in caplog.text and hook.signing_token not in caplog.text
    assert OWNER_TOKEN not in caplog.text


def test_rotation_refuses_the_old_token_and_accepts_the_new(
    gitlab: GitLabHooksAPI, live: Live
) -> None:
    hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets")
    old = _only_hook(gitlab).token
    assert old and _deliver(live, old) == 204
    result = hooks.register_hook(
        get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets", rotate=True
    )
    new = _only_hook(gitlab).token
    assert new and new != old and not result.created
    assert _deliver(live, old) == 401
    assert _deliver(live, new) == 204
    assert [d.status for d in gitlab.deliveries] == [204, 204], "each test passes at once"


def test_a_signed_delivery_with_the_old_signing_token_is_refused(
    gitlab: GitLabHooksAPI, live: Live
) -> None:
    hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "group:group")
    old = _only_hook(gitlab).signing_token
    hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "group:group", rotate=True)
    hook = _only_hook(gitlab)
    body = (FIXTURES / "Note_Hook__on_issue.json").read_bytes()
    for secret, status in ((old, 401), (hook.signing_token, 204)):
        assert secret
        headers = {"X-Gitlab-Event": "Note Hook", "X-Gitlab-Token": str(hook.token)}
        headers |= standard_signature(secret, f"msg-{status}", body)
        answer = httpx.post(f"{live.url}/webhooks/gitlab", content=body, headers=headers)
        assert answer.status_code == status
    assert hook.parent == "groups"


def test_a_developer_token_is_refused_and_nothing_is_stored(gitlab: GitLabHooksAPI) -> None:
    with pytest.raises(SetupError, match="needs the Maintainer role"):
        hooks.register_hook(get_settings(), "gitlab", DEVELOPER_TOKEN, "project:group/widgets")
    with pytest.raises(SetupError, match="needs the Owner role"):
        hooks.register_hook(get_settings(), "gitlab", DEVELOPER_TOKEN, "group:group")
    with pytest.raises(SetupError, match="no project group/nope"):
        hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/nope")
    with pytest.raises(SetupError, match="refused the token"):
        hooks.register_hook(get_settings(), "gitlab", "glpat-wrong", "project:group/widgets")
    assert gitlab.hooks == {} and stored() == {}


def test_rotating_a_hook_never_registered_changes_nothing(gitlab: GitLabHooksAPI) -> None:
    with pytest.raises(SetupError, match="register it first"):
        hooks.register_hook(
            get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets", rotate=True
        )
    assert gitlab.hooks == {} and stored() == {}


def test_the_cli_reads_the_token_from_stdin_and_prints_no_secret(
    gitlab: GitLabHooksAPI, tmp_path: Path
) -> None:
    runner = CliRunner()
    done = runner.invoke(setup_app, ["gitlab", "--project", "group/widgets"], input=OWNER_TOKEN)
    assert done.exit_code == 0, done.output
    hook = _only_hook(gitlab)
    assert f"registered the gitlab webhook {hook.id}" in done.output
    assert "stored in the vault: gitlab_webhook_token, gitlab_signing_token" in done.output
    rotated = runner.invoke(
        setup_app, ["gitlab", "--project", "group/widgets", "--rotate"], input=OWNER_TOKEN
    )
    assert rotated.exit_code == 0, rotated.output
    secrets = (OWNER_TOKEN, str(hook.token), str(hook.signing_token))
    assert not any(s in done.output + rotated.output for s in secrets)
    refused = runner.invoke(
        setup_app, ["gitlab", "--project", "group/widgets"], input=DEVELOPER_TOKEN
    )
    assert refused.exit_code == 1 and "Maintainer" in refused.output
    assert DEVELOPER_TOKEN not in refused.output


def test_a_secret_the_environment_sets_is_left_alone(
    gitlab: GitLabHooksAPI, live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    live.set(monkeypatch, gitlab_webhook_token="from-the-environment-0123456789")
    with pytest.raises(SetupError, match="RESOLVER_GITLAB_WEBHOOK_TOKEN is set in the environment"):
        hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets")
    assert gitlab.hooks == {} and stored() == {}


@pytest.mark.parametrize(
    "answer", [b"<html>maintenance</html>", b"{}", b"[5]", b'[{"id": null, "url": "%s"}]']
)
def test_an_answer_of_the_wrong_shape_is_a_setup_error_and_nothing_is_stored(
    live: Live, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    with served_answer(answer.replace(b"%s", f"{live.url}/webhooks/gitlab".encode())) as url:
        live.set(monkeypatch, gitlab_url=url)
        unusable = r"GitLab's answer to (GET|POST|PUT) /projects/:id/hooks\S* was unusable"
        with pytest.raises(SetupError, match=unusable):
            hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets")
    assert stored() == {}


class HollowCreate(GitLabHooksAPI):
    """The stand-in, creating the hook but answering `created` for it."""

    created: object = {}

    def serve(self, call: Routed) -> Reply:
        status, body, headers = super().serve(call)
        if call.method == "POST" and call.route.endswith("/hooks") and status == 201:
            return status, self.created, headers
        return status, body, headers


@pytest.mark.parametrize("created", [{}, {"id": None, "url": "x"}, {"id": "seven"}])
def test_a_created_hook_answered_without_its_id_is_a_setup_error_and_nothing_is_stored(
    live: Live, monkeypatch: pytest.MonkeyPatch, created: object
) -> None:
    api = HollowCreate()
    api.created = created
    owner = api.add_token(OWNER_TOKEN, "olga")
    api.add_member(api.add_project("group/widgets", clone_url=f"{api.url}/g.git"), owner, 40)
    live.set(monkeypatch, gitlab_url=api.url)
    try:
        with pytest.raises(SetupError, match=r"GitLab's answer to POST /projects/:id/hooks was"):
            hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets")
    finally:
        api.close()
    assert stored() == {}


def test_registering_twice_at_once_registers_one_hook(
    gitlab: GitLabHooksAPI, live: Live, backend: str
) -> None:
    """`/setup/gitlab/hook` pressed twice at once (or the command run twice): the second waits
    for the first, finds its hook and updates it, where both found none and created one each."""
    start = threading.Barrier(2)

    def press(_: int) -> hooks.HookResult:
        start.wait()
        return hooks.register_hook(get_settings(), "gitlab", OWNER_TOKEN, "project:group/widgets")

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(press, range(2)))
    hook = _only_hook(gitlab)
    assert sorted(r.created for r in results) == [False, True]
    assert stored()["gitlab_webhook_token"] == hook.token
