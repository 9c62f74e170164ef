"""Prometheus metrics after a scripted job: the web process's and a worker's `/metrics`."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import GitHttpServer
from tests.conftest import ResolverEnv
from tests.deploy.grafana import dashboard_series
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment, widgets
from tests.e2e.stack import fix_script, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.support.metrics import samples
from tests.support.ports import free_port
from tests.support.procs import wait_until

pytestmark = pytest.mark.timeout(300)


def scrape(port: int) -> str:
    return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text


def test_every_series_has_a_sane_value_after_a_scripted_job(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    settings = github_settings(github_api, key_file)
    port = free_port()
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.push(*fix_script())
        stack.start_resolver_worker("all", "jobs,callbacks,default", 4, metrics_port=port)
        wait_until(lambda: _answers(port), 60, "the worker's metrics port")
        client = ingress(stack, monkeypatch)
        payload = issue_comment(github_api, git_server, "@resolver please fix add()")
        job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)
        worker = samples(scrape(port))
        web = client.get("/metrics")

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert worker[("resolver_job_duration_seconds_count", (("outcome", "changed_code"),))] == 1
    assert 0 < worker[("resolver_job_duration_seconds_sum", (("outcome", "changed_code"),))] < 240
    assert worker[("resolver_job_start_seconds_count", ())] == 1
    assert worker[("resolver_job_start_seconds_sum", ())] < 60
    assert worker[("resolver_acknowledge_seconds_count", ())] == 1
    assert worker[("resolver_acknowledge_seconds_sum", ())] < 60
    assert worker[("resolver_llm_tokens_total", (("kind", "prompt"),))] == job.prompt_tokens > 0
    assert worker[("resolver_llm_tokens_total", (("kind", "completion"),))] == job.completion_tokens
    assert worker[("resolver_llm_cost_usd_total", ())] == pytest.approx(job.cost_usd)
    ok = {
        labels: value
        for (name, labels), value in worker.items()
        if name == "resolver_callback_attempts_total"
    }
    assert ok[(("action", "react"), ("outcome", "ok"))] == 1
    assert ok[(("action", "open_pull"), ("outcome", "ok"))] == 1
    assert ok[(("action", "status"), ("outcome", "ok"))] >= 1
    assert worker[("resolver_sandboxes_running", ())] == 0  # its sandbox is gone
    assert worker[("resolver_reaper_removals_total", ())] == 0

    assert web.status_code == 200 and web.headers["content-type"].startswith("text/plain")
    page = samples(web.text)
    for queue in ("jobs", "callbacks", "default"):
        assert page[("resolver_queue_messages", (("queue", queue),))] == 0
    for queue in ("jobs", "callbacks"):
        assert page[("resolver_queue_oldest_age_seconds", (("queue", queue),))] == 0

    # Every series a panel of the Grafana dashboard reads is on one of the two pages.
    exposed = {name for name, _ in [*worker, *page]}
    missing = {n: panel for n, panel in dashboard_series().items() if n not in exposed}
    assert missing == {}


def _answers(port: int) -> bool:
    try:
        return scrape(port).startswith("#")
    except httpx.HTTPError:
        return False
