"""bench/agent's token figure: LLM input tokens of a long run, Resolver beside full history.

One scripted run of `steps` commands that print a few KB each (source files, grep listings, a
failing command now and then), through Resolver's real loop in a real sandbox: older outputs cut
to a head and a tail, condensation when the history grows past its threshold. Then, in the same
process and against the same server, the run the naive way: for every step, the full history
of that run, untruncated, sent as it is. The scripted server measures both (about four
characters per token) and reports as `prompt_tokens_details.cached_tokens` the prefix a request
shares with the one before, counted the way OpenAI's automatic prompt caching counts it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tests.support.llm_server import Reply, ScriptedLLMServer, finish, text, tool

GOAL = 0.5
SOURCES = (
    "argparse.py",
    "subprocess.py",
    "json/decoder.py",
    "logging/__init__.py",
    "tempfile.py",
    "shutil.py",
    "configparser.py",
    "difflib.py",
    "functools.py",
    "inspect.py",
    "email/message.py",
    "http/client.py",
    "unittest/case.py",
    "dataclasses.py",
)
STDLIB = "export L=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"stdlib\"])')"


def command(step: int) -> str:
    """The agent's `step`th command: reading, searching, and a failing run every seventh step."""
    source = f"$L/{SOURCES[step % len(SOURCES)]}"
    start = 1 + (step * 37) % 400
    kinds = (
        f"sed -n '{start},{start + 90}p' {source}",
        f"grep -n 'def \\|class ' {source} | head -80",
        f"cat -n {source} | sed -n '{start},{start + 80}p'",
        f"ls -la $L | head -{70 + step % 20}",
        f"grep -rn 'raise ' {source} | head -60",
        f"sed -n '{start + 100},{start + 200}p' {source}",
        f"python3 -m unittest test_step_{step} 2>&1; python3 -c 'import {source[3:-3]}' 2>&1",
    )
    if step == 0:
        return f"{STDLIB}; ls $L | head -80"
    return kinds[step % len(kinds)]


def scripted(steps: int) -> Any:
    """Answers each tool-calling request with the next command, summary requests with text."""
    asked = [0]

    def answer(request: dict[str, Any]) -> Reply:
        if not request.get("tools"):
            return text("Summary: the agent read parts of the standard library sources.")
        step = asked[0]
        asked[0] += 1
        if step >= steps:
            return finish("answered", "done")
        return tool("execute_bash", command=command(step))

    return answer


@dataclass(frozen=True)
class Tokens:
    input: int
    cached: int
    requests: int
    largest: int  # the input tokens of the largest request

    @property
    def cached_share(self) -> float:
        return self.cached / self.input if self.input else 0.0


@dataclass(frozen=True)
class TokenFigures:
    steps: int
    output_kb: float  # mean size of a command's output
    outputs_cut: int  # outputs the sandbox's own limit cut (0: the baseline is untruncated)
    condensations: int
    resolver: Tokens
    full: Tokens


def bench_tokens(steps: int) -> TokenFigures:
    from resolver.agent.events import Kind

    server = ScriptedLLMServer([], measure_usage=True).start()
    try:
        events = _run(server, steps)
        resolver = _spent(events)
        full = _replay_full_history(server, events)
    finally:
        server.stop()
    outputs = [str(e.payload["content"]) for e in events if e.kind == Kind.OBSERVATION]
    return TokenFigures(
        steps=steps,
        output_kb=sum(len(o) for o in outputs) / max(len(outputs), 1) / 1024,
        outputs_cut=sum("characters cut" in o for o in outputs),
        condensations=sum(e.kind == Kind.CONDENSATION for e in events),
        resolver=resolver,
        full=full,
    )


def _run(server: ScriptedLLMServer, steps: int) -> list[Any]:
    """Resolver's loop with the settings as configured; returns the trajectory's events."""
    from resolver.agent.controller import run_agent
    from resolver.agent.events import Event
    from resolver.agent.llm import llm_config_from
    from resolver.agent.sandboxes import policy_from_settings
    from resolver.agent.task import AgentTask, limits_from
    from resolver.core.job import JobContext
    from resolver.core.settings import get_settings
    from resolver.store import jobs
    from resolver.store.db import session_scope
    from sandbox import open_sandbox

    settings = get_settings()
    config = llm_config_from(settings)
    config = replace(config, base_url=server.base_url)
    with session_scope() as session:
        job_id = jobs.create_job(session, jobs.NewJob(source="cli", task="bench tokens")).id
    task = AgentTask(job_id, "bench", None, None, limits_from(settings), ())
    server.set_script(scripted(steps))
    policy = policy_from_settings(settings)
    with open_sandbox(str(job_id), policy) as sandbox, session_scope() as session:
        result = run_agent(session, task, sandbox, JobContext(job_id, get_settings()), config)
    assert result.outcome == "answered", result
    with session_scope() as session:
        rows = jobs.get_job(session, job_id).events
        return [Event(e.seq, e.kind, e.payload) for e in rows]


def _spent(events: list[Any]) -> Tokens:
    usages = [e.payload["usage"] for e in events if e.payload.get("usage")]
    return Tokens(
        input=sum(int(u["prompt_tokens"]) for u in usages),
        cached=sum(int(u.get("cached_tokens", 0)) for u in usages),
        requests=len(usages),
        largest=max(int(u["prompt_tokens"]) for u in usages),
    )


def _replay_full_history(server: ScriptedLLMServer, events: list[Any]) -> Tokens:
    """Send, for every step of the run, its whole history as it was, nothing cut or condensed."""
    from resolver.agent.events import Kind, build_messages
    from resolver.agent.llm import complete, llm_config_from
    from resolver.agent.tools import TOOLS
    from resolver.core.settings import get_settings

    config = llm_config_from(get_settings())
    config = replace(config, base_url=server.base_url)
    history = [e for e in events if e.kind != Kind.CONDENSATION]
    asks = [e.seq for e in history if e.kind == Kind.ACTION and "usage" in e.payload]
    server.set_script(lambda _request: tool("think", thought="x"))
    spent = []
    for seq in asks:
        messages = build_messages([e for e in history if e.seq < seq])
        reply = complete(config, messages, TOOLS, on_retry=lambda _r: None, wait=lambda _s: False)
        spent.append(reply.usage)
    return Tokens(
        input=sum(u.prompt_tokens for u in spent),
        cached=sum(u.cached_tokens for u in spent),
        requests=len(spent),
        largest=max(u.prompt_tokens for u in spent),
    )


def print_tokens(figures: TokenFigures) -> None:
    resolver, full = figures.resolver, figures.full
    ratio = resolver.input / full.input if full.input else 0.0
    print(
        f"tokens: {figures.steps} steps (+1 finish), command outputs {figures.output_kb:.1f} KB "
        f"on average ({figures.outputs_cut} cut by the sandbox's limit); LLM input tokens"
    )
    print(f"{'':34}{'input':>10}{'cached':>10}{'cached share':>14}{'requests':>10}{'largest':>9}")
    for name, spent in (
        ("Resolver (as configured)", resolver),
        ("full history, untruncated", full),
    ):
        print(
            f"{name:34}{spent.input:10d}{spent.cached:10d}"
            f"{spent.cached_share:13.0%}{spent.requests:11d}{spent.largest:9d}"
        )
    print(f"ratio Resolver / full history     {ratio:10.2f}   (goal <= {GOAL})")
    print(f"condensations in the run          {figures.condensations:10d}")
