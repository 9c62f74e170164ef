"""Red CI on the bot's Bitbucket pull request reads Bitbucket Pipelines, against the stand-in:
the run the status names, its failed step, and the end of that step's log, asked for as a
suffix range and read from its storage without the token; what cannot be read is said, not
fatal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet

from integrations.bitbucket.pipelines import PipelinesClient, ci_report
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.pipelines import Step
from integrations.bitbucket.standin.state import Repo
from integrations.bitbucket.trigger import UNKNOWN_PULL
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.provider import CIReport
from resolver.contract.triggers import CiFailure, FailedCheck, Repository
from resolver.core.settings import get_settings
from resolver.features.ci.contract import LOG_TAIL_CHARS
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO
from tests.support.serving import served_answer, served_flood

BRANCH = "resolver/3-fix"
SHA = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
LOG_END = "FAILED test_calc.py::test_add - AssertionError (LOG-END-MARKER)\n"
NOISE = "".join(f"noise line {n}\n" for n in range(2000))
LOG_ROUTE = (
    "GET /repositories/{workspace}/{repo_slug}/pipelines/{pipeline_uuid}/steps/{step_uuid}/log"
)


@pytest.fixture
def settings(bitbucket_api: BitbucketAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from tests.conftest import reset_caches

    monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", bitbucket_api.api_url)
    monkeypatch.setenv("RESOLVER_BITBUCKET_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    reset_caches()
    yield
    reset_caches()


def report(pipeline_id: int | None = None, sha: str = SHA) -> CIReport:
    check = FailedCheck(
        name="Pipeline", head_sha=sha, branch=BRANCH, conclusion="failed", pipeline_id=pipeline_id
    )
    trigger = CiFailure(
        repo=Repository(full_name=REPO), number=UNKNOWN_PULL, head_ref=BRANCH, check=check
    )
    return ci_report(trigger, None, check, get_settings())


def failing(api: BitbucketAPI, repo: Repo, log: str = NOISE + LOG_END) -> Step:
    step = Step("FAILED", log=log.encode())
    api.add_pipeline(repo, BRANCH, SHA, [Step("SUCCESSFUL", log=b"lint ok\n"), step])
    return step


def test_the_failed_steps_log_end_is_read_from_its_storage_without_the_token(
    bitbucket_api: BitbucketAPI, repo: Repo, settings: None
) -> None:
    failing(bitbucket_api, repo)
    found = report(pipeline_id=1)
    assert found.log_tail.endswith(LOG_END) and found.log_cut
    assert "noise line 0\n" not in found.log_tail and len(found.log_tail) <= LOG_TAIL_CHARS
    assert "lint ok" not in found.log_tail  # the step that passed is not read
    [asked] = bitbucket_api.calls(LOG_ROUTE)
    assert asked.status == 307 and asked.headers["range"] == f"bytes=-{LOG_TAIL_CHARS * 4}"
    [download] = bitbucket_api.log_downloads
    assert "authorization" not in download and download["range"] == asked.headers["range"]


def test_a_short_log_served_by_the_api_itself_is_whole_and_not_cut(
    bitbucket_api: BitbucketAPI, repo: Repo, settings: None
) -> None:
    bitbucket_api.logs_in_storage = False
    failing(bitbucket_api, repo, log=LOG_END)
    found = report()
    assert (found.log_tail, found.log_cut) == (LOG_END, False)
    assert bitbucket_api.log_downloads == []


def test_the_run_the_status_names_is_read_else_the_newest_that_failed(
    bitbucket_api: BitbucketAPI, repo: Repo, settings: None
) -> None:
    failing(bitbucket_api, repo, log="first run\n")
    failing(bitbucket_api, repo, log="second run\n")
    assert report(pipeline_id=1).log_tail == "first run\n"
    assert report(pipeline_id=None).log_tail == "second run\n"


def test_a_step_that_could_not_run_says_why_and_other_failed_steps_are_named(
    bitbucket_api: BitbucketAPI, repo: Repo, settings: None
) -> None:
    steps = [
        Step("ERROR", error="The image python:9 could not be pulled"),
        Step("FAILED", log=b"tests failed\n"),
    ]
    bitbucket_api.add_pipeline(repo, BRANCH, SHA, steps)
    found = report()
    assert found.annotations == ("step error: The image python:9 could not be pulled",)
    assert found.unavailable == ("the logs of 1 more failed step(s)",)


def test_a_commit_without_a_pipelines_run_says_so(
    bitbucket_api: BitbucketAPI, repo: Repo, settings: None
) -> None:
    failing(bitbucket_api, repo)
    assert report(sha="f" * 40) == CIReport(
        unavailable=(f"no Bitbucket Pipelines run of {'f' * 12}",)
    )
    assert bitbucket_api.calls(LOG_ROUTE) == []


def test_a_refused_log_is_a_permanent_error_that_names_no_token(
    bitbucket_api: BitbucketAPI, repo: Repo, settings: None
) -> None:
    failing(bitbucket_api, repo)
    bitbucket_api.fail(LOG_ROUTE, 403)
    with pytest.raises(PermanentCallbackError) as refused:
        report()
    assert "403" in str(refused.value) and BOT_TOKEN not in str(refused.value)


def test_an_error_answer_to_a_log_is_read_only_as_far_as_its_message() -> None:
    """A 500 of 256 MB to a step's log: its first few KB give the message, and the rest is
    never read (it was read whole, half a gigabyte of memory)."""
    size = 256 * 1024 * 1024
    with served_flood(500, size) as (url, flood):
        client = PipelinesClient(url, lambda: BOT_TOKEN)
        with pytest.raises(TransientCallbackError, match="500"):
            client.step_log_tail(REPO, "{p}", "{s}", keep=1024, budget=1024 * 1024)
    assert flood.sent < size // 4


@pytest.mark.parametrize(
    "answer",
    [
        b'{"values": [{"state": "FAILED", "build_number": 1}]}',
        b'{"values": [{"uuid": null, "build_number": 1, "state": {"result": {"name": "FAILED"}}}]}',
    ],
)
def test_a_run_of_the_wrong_shape_leaves_the_report_out_with_a_reason(
    answer: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with no uuid, or a state that is no object, is Bitbucket's unusable answer (the
    fix starts from the check alone), not a TypeError that failed the fix job."""
    from tests.conftest import reset_caches

    with served_answer(answer) as url:
        monkeypatch.setenv("RESOLVER_BITBUCKET_API_URL", url)
        monkeypatch.setenv("RESOLVER_BITBUCKET_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
        reset_caches()
        try:
            with pytest.raises(PermanentCallbackError, match="unusable"):
                report(pipeline_id=1)
        finally:
            reset_caches()
