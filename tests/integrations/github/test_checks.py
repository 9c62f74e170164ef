"""A failing check as GitHub reports it (integrations/github/checks.py), read from the GitHub
stand-in: a check's annotations, and for a GitHub Actions job the tail of its log, followed
from the API's redirect to a download that gets no token; a download that fails is an error
of the right kind."""

from __future__ import annotations

import pytest

from integrations.github.auth import ci_client
from integrations.github.checks import ACTIONS_APP, ci_report, read_tail
from integrations.github.standin.api import GitHubAPI
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.triggers import FailedCheck, read_trigger
from resolver.core.settings import Settings, get_settings
from resolver.features.ci.contract import LOG_TAIL_CHARS
from tests.integrations.github.conftest import INSTALLATION_ID, REPO
from tests.integrations.github.test_auth import github_env  # noqa: F401 - a fixture
from tests.support.ports import free_port

CHECK_ID = 31
CONTEXT = {"repo": REPO, "number": 7, "installation_id": INSTALLATION_ID}
ANNOTATION = {
    "path": "calc.py",
    "start_line": 12,
    "annotation_level": "failure",
    "title": "test_add",
    "message": "assert 3 == 4",
}


def failed(check_id: int | None = CHECK_ID) -> FailedCheck:
    return FailedCheck("tests", "a" * 40, "resolver/fix-7", "failure", check_id=check_id)


def test_an_actions_check_brings_its_annotations_and_the_end_of_its_log(
    github_env: Settings,  # noqa: F811
    github_api: GitHubAPI,
) -> None:
    github_api.checks.annotations[CHECK_ID] = [ANNOTATION]
    noise = "".join(f"2026-01-01T00:00:00Z step {n}\n" for n in range(2000))
    github_api.checks.logs[CHECK_ID] = noise + "FAILED calc.py::test_add\n"
    report = ci_report(
        read_trigger({**CONTEXT, "check_app": ACTIONS_APP}), None, failed(), get_settings()
    )
    assert report.annotations == ("calc.py:12: failure: test_add: assert 3 == 4",)
    assert report.log_tail.endswith("FAILED calc.py::test_add\n")
    assert len(report.log_tail) <= LOG_TAIL_CHARS and report.log_cut
    assert report.log_tail.startswith("2026-01-01T00:00:00Z step")  # cut at a line's start
    [download] = github_api.checks.downloads
    assert "authorization" not in {name.lower() for name in download}


def test_another_apps_check_brings_its_annotations_only(
    github_env: Settings,  # noqa: F811
    github_api: GitHubAPI,
) -> None:
    github_api.checks.annotations[CHECK_ID] = [ANNOTATION]
    github_api.checks.logs[CHECK_ID] = "never read"
    report = ci_report(
        read_trigger({**CONTEXT, "check_app": "circleci-checks"}), None, failed(), get_settings()
    )
    assert report.annotations == ("calc.py:12: failure: test_add: assert 3 == 4",)
    assert (report.log_tail, report.log_cut) == ("", False)
    assert github_api.checks.downloads == []


def test_a_check_without_an_id_asks_github_nothing(
    github_env: Settings,  # noqa: F811
    github_api: GitHubAPI,
) -> None:
    before = len(github_api.requests)
    report = ci_report(read_trigger(CONTEXT), None, failed(check_id=None), get_settings())
    assert report.annotations == () and report.log_tail == ""
    assert len(github_api.requests) == before


def test_a_short_log_is_kept_whole(
    github_env: Settings,  # noqa: F811
    github_api: GitHubAPI,
) -> None:
    github_api.checks.annotations[CHECK_ID] = []
    github_api.checks.logs[CHECK_ID] = "1 failed\n"
    report = ci_report(
        read_trigger({**CONTEXT, "check_app": ACTIONS_APP}), None, failed(), get_settings()
    )
    assert (report.log_tail, report.log_cut) == ("1 failed\n", False)


def test_a_download_that_answers_an_error_is_permanent(github_api: GitHubAPI) -> None:
    with pytest.raises(PermanentCallbackError, match="the log download answered 404"):
        read_tail(f"{github_api.origin}/_blobs/job-logs/expired?sig=x")


def test_a_download_that_cannot_be_reached_is_transient() -> None:
    port = free_port()  # reserved for this test: nothing listens on it
    with pytest.raises(TransientCallbackError, match="the log could not be read: ConnectError"):
        read_tail(f"http://127.0.0.1:{port}/log")


def test_only_the_read_budget_is_read_of_a_huge_log(
    github_env: Settings,  # noqa: F811
    github_api: GitHubAPI,
) -> None:
    github_api.checks.logs[CHECK_ID] = "x" * 300_000 + "the end\n"
    location = ci_client(read_trigger(CONTEXT), None, get_settings()).job_log_location(
        REPO, CHECK_ID
    )
    text, cut = read_tail(location, budget=100_000)
    assert cut and "the end" not in text and len(text) <= LOG_TAIL_CHARS
