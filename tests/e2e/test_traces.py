"""One trace per job, across the web process and a worker: a scripted job exports its spans over
OTLP/HTTP to a local receiver, which decodes them as a collector would (tests/support)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import GitHttpServer
from resolver import observability
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment, widgets
from tests.e2e.stack import BROKEN, fix_script, ingress, running_stack
from tests.integrations.deliveries import SECRETS, github, post
from tests.support.otlp_receiver import ReceivedSpan, Receiver, otlp_receiver
from tests.support.procs import wait_until

pytestmark = pytest.mark.timeout(300)

PLANTED = "hunter2-planted-in-the-request"
EXPECTED = (
    "ingress.intake",
    "apply_async/resolver.callbacks.acknowledge",
    "run/resolver.callbacks.acknowledge",
    "apply_async/resolver.run_job",
    "run/resolver.run_job",
    "git.clone",
    "sandbox.start",
    "agent.step",
    "llm.call",
    "agent.tool",
    "sandbox.export",
    "git.push",
    "apply_async/resolver.callbacks.deliver",
    "run/resolver.callbacks.deliver",
)


def test_a_job_is_one_trace_from_the_webhook_to_its_callbacks(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    settings = github_settings(github_api, key_file)
    with (
        otlp_receiver() as (receiver, endpoint),
        running_stack(resolver_env, tmp_path, **settings) as stack,
    ):
        otel = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_TRACES_SAMPLER_ARG": "1",  # every job (the default keeps one in ten)
        }
        for key, value in otel.items():
            monkeypatch.setenv(key, value)
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.push(*fix_script())
        worker = stack.start_resolver_worker("all", "jobs,callbacks,default", 4, **otel)
        try:
            client = ingress(stack, monkeypatch)
            text = f"@resolver please fix add() {PLANTED}"
            payload = issue_comment(github_api, git_server, text)
            job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
            stack.wait_finished(job_id)
            stack.wait_callbacks_settled(job_id)
            stack.stop(worker)  # flushes the worker's spans (the stack kills what is left)
        finally:
            observability.shutdown()  # flushes the web side's spans
        job = stack.job(job_id)
        wait_until(lambda: _has_every_span(receiver), 60, "every span at the receiver")
        tokens = list(github_api.tokens)

    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    spans = {span.span_id: span for span in receiver.spans}
    [request] = [s for s in receiver.spans if s.name == "POST /webhooks/github"]
    trace = [s for s in receiver.spans if s.trace_id == request.trace_id]

    def under(name: str, ancestor: ReceivedSpan) -> list[ReceivedSpan]:
        return [s for s in trace if s.name == name and _descends(s, ancestor, spans)]

    [intake] = under("ingress.intake", request)
    # The web process sends the mention's one message; the callbacks side, having sent the 👀,
    # sends the job's.
    [acknowledged] = under("apply_async/resolver.callbacks.acknowledge", request)
    assert acknowledged.service == intake.service == "resolver-web"
    [published] = under("apply_async/resolver.run_job", request)
    assert published.service == "resolver-worker"
    # The web process leaves its SQL and Redis commands out (observability.WEB_QUIET).
    assert not [
        s
        for s in trace
        if _descends(s, request, spans)
        and s.service == "resolver-web"
        and "db.statement" in s.attributes
    ]
    [run] = [s for s in trace if s.name == "run/resolver.run_job"]
    assert run.parent_id == published.span_id and run.service == "resolver-worker"
    for name in ("git.clone", "sandbox.start", "sandbox.export", "git.push"):
        assert len(under(name, run)) == 1, name
    assert [s for s in trace if _descends(s, run, spans) and "db.statement" in s.attributes]
    # A worker's polling of Redis starts no trace of its own.
    roots = [s.name for s in receiver.spans if not s.parent_id]
    assert all(name.startswith(("POST", "run/")) for name in roots), roots
    steps = under("agent.step", run)
    assert sorted(s.attributes["step"] for s in steps) == [1, 2, 3, 4]
    calls = under("llm.call", run)
    assert len(calls) == 4 and all(spans[c.parent_id].name == "agent.step" for c in calls)
    for call in calls:
        assert call.attributes["llm.model"] == "openai/scripted-model"
        assert isinstance(call.attributes["llm.tokens.prompt"], int)
        assert call.attributes["llm.tokens.prompt"] > 0
        assert call.attributes["llm.latency_ms"] >= 0  # type: ignore[operator]
    assert sum(c.attributes["llm.cost_usd"] for c in calls) == pytest.approx(job.cost_usd)  # type: ignore[misc]
    bash = [t for t in under("agent.tool", run) if t.attributes["tool"] == "execute_bash"]
    assert [t.attributes["exit_code"] for t in bash] == [0, 0]

    # The first status is sent from the request's trace, the pull request from the job's.
    delivered = [s for s in trace if s.name == "run/resolver.callbacks.deliver"]
    assert any(_descends(d, run, spans) for d in delivered)
    assert any(_descends(d, request, spans) and not _descends(d, run, spans) for d in delivered)
    pulls = [s for s in trace if s.name == "POST" and _url(s).endswith("/pulls")]
    assert pulls, sorted({s.name for s in trace})
    assert any(_descends(p, run, spans) for p in pulls)

    secrets = [PLANTED, "scripted-key", SECRETS["github"], BROKEN.strip(), "cat calc.py", *tokens]
    for span in receiver.spans:
        for key, value in span.attributes.items():
            for secret in secrets:
                assert secret not in str(value), (span.name, key)


def _url(span: ReceivedSpan) -> str:
    return str(span.attributes.get("url.full") or span.attributes.get("http.url") or "")


def _has_every_span(receiver: Receiver) -> bool:
    return all(receiver.named(name) for name in EXPECTED)


def _descends(span: ReceivedSpan, ancestor: ReceivedSpan, spans: dict[str, ReceivedSpan]) -> bool:
    """Whether `ancestor` is on the chain of parents from `span`."""
    seen = span
    while seen.parent_id:
        if seen.parent_id == ancestor.span_id:
            return True
        if seen.parent_id not in spans:
            return False
        seen = spans[seen.parent_id]
    return False
