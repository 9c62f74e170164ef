"""GitLab's preflight: the bot's stored token works (`GET /user`), and each project Resolver
knows has a webhook to `/webhooks/gitlab` on the events `routes.ROUTES` acts on, whose test
delivery (`POST /projects/:id/hooks/:hook_id/test/note_events`) our endpoint accepts.
https://docs.gitlab.com/api/project_webhooks/
"""

from __future__ import annotations

from typing import Final

import gitlab
import requests
from gitlab.exceptions import GitlabError, GitlabHookTestError

from integrations.gitlab.api import ERRORS, error_detail
from integrations.gitlab.routes import ROUTES
from integrations.gitlab.settings import GitLabSettings
from integrations.gitlab.setup import EVENT_FLAGS, TEST_TRIGGER
from integrations.toolkit.answers import SHAPE_ERRORS, text
from integrations.toolkit.limits import Limits
from integrations.toolkit.sessions import mount_bounded
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.inbound import secret_value
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token

TIMEOUT_SECONDS: Final = 10.0
TOKEN, HOOK = "gitlab token", "gitlab webhook"
# The calls, not checks' names (tests/test_docs reads `NAME = "…"` lines as those).
USER: Final = "GET /user"
HOOKS: Final = "GET /projects/:id/hooks"
# An answer past its cap (requests' ContentDecodingError) is no answer either.
NETWORK_ERRORS: Final = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ContentDecodingError,
)


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    gitlab_settings = GitLabSettings.of(settings)
    enabled = secret_value(gitlab_settings.webhook_token) or secret_value(
        gitlab_settings.signing_token
    )
    token = stored_token("gitlab", installation=gitlab_settings.url, settings=settings)
    if token is None:
        return [] if not enabled else [_no_token(settings)]
    register_secret(token)
    api = gitlab.Gitlab(
        gitlab_settings.url,
        private_token=token,
        timeout=TIMEOUT_SECONDS,
        retry_transient_errors=False,
        user_agent=f"Resolver ({settings.bot_name})",
    )
    mount_bounded(api.session, Limits(seconds=TIMEOUT_SECONDS))
    try:
        return _checks(scope, api)
    finally:
        api.session.close()


def _checks(scope: PreflightScope, api: gitlab.Gitlab) -> list[Check]:
    url = GitLabSettings.of(scope.settings).url
    fix = "store a working bot token (`resolver tokens set --provider gitlab`)"
    try:
        api.auth()
        user = text(getattr(api.user, "username", None))
    except GitlabError as error:
        if error.response_code is None:  # python-gitlab could not read it (a page, no object)
            return [Check(TOKEN, "fail", f"{ERRORS.unusable_answer(USER, error)}; {fix}")]
        detail = error_detail(error.error_message)
        return [Check(TOKEN, "fail", f"GitLab answered {error.response_code} to {USER}: "
                      f"{detail}; {fix}")]  # fmt: skip
    except NETWORK_ERRORS as error:
        return [Check(TOKEN, "fail", f"{url} cannot be reached ({type(error).__name__})")]
    except SHAPE_ERRORS as error:  # after requests' own, some of which are ValueErrors
        return [Check(TOKEN, "fail", f"{ERRORS.unusable_answer(USER, error)}; {fix}")]
    found = [Check(TOKEN, "ok", f"acts as @{user} on {url}")]
    if not scope.repositories:
        return [*found, Check(HOOK, "off", "no GitLab project known yet: its hook is checked once "
                              "a route or a job names one")]  # fmt: skip
    url = hook_url(scope.settings.public_url)
    return found + [project_check(api, project, url) for project in scope.repositories]


def _no_token(settings: Settings) -> Check:
    url = GitLabSettings.of(settings).url
    return Check(
        TOKEN,
        "fail",
        f"no GitLab token is stored for {url}, so replies cannot be posted: "
        f'store the bot\'s with `printf %s "$TOKEN" | resolver tokens set --provider gitlab '
        f"--installation {url}`",
    )


def hook_url(public_url: str) -> str:
    return f"{public_url.rstrip('/')}/webhooks/gitlab"


def needed_events() -> list[str]:
    return list(dict.fromkeys(EVENT_FLAGS[key] for key in ROUTES))


def project_check(api: gitlab.Gitlab, project: str, url: str) -> Check:
    """The project's hook to `url`: there, on the needed events, and its test accepted."""
    name = f"{HOOK} {project}"
    try:
        hooks = api.projects.get(project, lazy=True).hooks.list(get_all=True)
        hook = next((h for h in hooks if h.url == url), None)
    except GitlabError as error:
        if error.response_code is None:  # python-gitlab could not read it (a page, no object)
            return Check(name, "fail", str(ERRORS.unusable_answer(HOOKS, error)))
        fix = "the token needs the Maintainer role there" if error.response_code == 403 else ""
        return Check(name, "fail", f"cannot list its hooks ({error.response_code}) {fix}".strip())
    except NETWORK_ERRORS as error:
        return Check(name, "fail", f"GitLab cannot be reached ({type(error).__name__})")
    except SHAPE_ERRORS as error:
        return Check(name, "fail", str(ERRORS.unusable_answer(HOOKS, error)))
    if hook is None:
        return Check(name, "fail", f"no webhook to {url}: add one under Settings > Webhooks, "
                     "or run `resolver setup gitlab`")  # fmt: skip
    missing = [field for field in needed_events() if not getattr(hook, field, False)]
    if missing:
        return Check(name, "fail", f"turn on {', '.join(missing)} on its webhook to {url}")
    return _test(hook, name, url)


def _test(hook: object, name: str, url: str) -> Check:
    try:
        hook.test(TEST_TRIGGER)  # type: ignore[attr-defined]
    except GitlabHookTestError as error:
        return Check(
            name,
            "fail",
            f"GitLab's test delivery to {url} failed ({error_detail(error.error_message)}): the "
            "hook's secret token must equal RESOLVER_GITLAB_WEBHOOK_TOKEN, and the URL be "
            "reachable from GitLab",
        )
    except NETWORK_ERRORS as error:
        return Check(name, "fail", f"GitLab cannot be reached ({type(error).__name__})")
    return Check(name, "ok", f"a test {TEST_TRIGGER} delivery to {url} was accepted")
