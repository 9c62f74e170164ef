"""The agent loop's overhead per step, LLM time excluded.

The scripted server answers instantly; every step runs a real command in a real sandbox.
Printed side by side: the loop's time per step minus the LLM server's time (the overhead the
target is about), how it splits into litellm's client time, the sandbox exec and the loop's own
work, and as baselines the raw sandbox exec (through the session's shell), one bare engine exec
(what every command cost before the session kept a shell), and a litellm round trip.

Then the token figure (_tokens.py): the LLM input tokens of a scripted run whose commands
print a few KB each, through the real loop (older outputs cut, condensation), beside the same
run sending its full, untruncated history at every step; and the share of them a prefix cache
served, as the scripted server reports it the way OpenAI's usage object does.

Between them, an MCP tool call (_mcp.py): a stdio server in the sandbox and a remote one the
host calls, each through the loop's own path, beside a shell command in the same sandbox.

    uv run python bench/agent.py [--steps 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.fernet import Fernet

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _mcp import bench_mcp, print_mcp
from _tokens import TokenFigures, bench_tokens, print_tokens

from tests.support.llm_server import MODEL, ScriptedLLMServer, finish, tool

if TYPE_CHECKING:
    from resolver.core.tracing import Carrier


def configure(tmp: Path, server: ScriptedLLMServer) -> None:
    os.environ.update(
        {
            "RESOLVER_DATABASE_URL": f"sqlite:///{tmp / 'bench.db'}",
            "RESOLVER_SECRET_KEYS": Fernet.generate_key().decode(),
            "RESOLVER_SANDBOX_WORKSPACE_ROOT": str(tmp / "workspaces"),
            "RESOLVER_LLM_MODEL": MODEL,
            "RESOLVER_LLM_API_KEY": "bench-key-0000",
            "RESOLVER_LLM_BASE_URL": server.base_url,
            "RESOLVER_LLM_INPUT_COST_PER_TOKEN": "0.000001",
            "RESOLVER_LLM_OUTPUT_COST_PER_TOKEN": "0.000002",
        }
    )
    from tests.conftest import reset_caches

    reset_caches()  # and the store reads the database above


def script(steps: int) -> list:  # type: ignore[type-arg]
    replies = [tool("execute_bash", command=f"echo step {n}") for n in range(steps)]
    return [*replies, finish("answered", "done")]


@dataclass(frozen=True)
class LoopFigures:
    """Seconds per step, split by what the trajectory records."""

    total: float
    llm_call: float  # litellm's client round trip, server time included
    llm_server: float
    sandbox_exec: float
    cpu: float = 0.0  # this process's CPU time (every thread), the model server's included


def bench_loop(server: ScriptedLLMServer, steps: int, trace: Carrier = ()) -> LoopFigures:
    """The loop run as a job of the trace `trace` names (bench/tracing.py), when traced."""
    from resolver.agent.controller import run_agent
    from resolver.agent.sandboxes import policy_from_settings
    from resolver.agent.task import AgentTask, limits_from
    from resolver.core import tracing
    from resolver.core.job import JobContext
    from resolver.core.settings import get_settings
    from resolver.store import jobs
    from resolver.store.db import session_scope
    from sandbox import ensure_image, open_sandbox

    settings = get_settings()
    ensure_image(offline=True)
    with session_scope() as session:
        job_id = jobs.create_job(session, jobs.NewJob(source="cli", task="bench")).id
    task = AgentTask(job_id, "bench", None, None, limits_from(settings), ())
    with open_sandbox(str(job_id), policy_from_settings(settings)) as sandbox:
        sandbox.run("true")  # the first exec pays for the container's start
        server.set_script(script(steps))
        server.server_seconds = 0.0
        started, cpu = time.perf_counter(), time.process_time()
        with tracing.within(trace), session_scope() as session:
            result = run_agent(session, task, sandbox, JobContext(job_id, get_settings()))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert result.outcome == "answered", result
    with session_scope() as session:
        payloads = [e.payload for e in jobs.get_job(session, job_id).events]
    count = steps + 1
    return LoopFigures(
        total=elapsed / count,
        llm_call=sum(p.get("llm_seconds", 0.0) for p in payloads) / count,
        llm_server=server.server_seconds / count,
        sandbox_exec=sum(p.get("duration", 0.0) for p in payloads) / count,
        cpu=cpu / count,
    )


def bench_exec(steps: int) -> tuple[float, float]:
    """Median seconds of one `sandbox.run` of a trivial command, and of one bare engine exec."""
    from resolver.agent.sandboxes import policy_from_settings
    from resolver.core.settings import get_settings
    from sandbox import open_sandbox
    from sandbox.execution import capture

    with open_sandbox("999999", policy_from_settings(get_settings())) as sandbox:
        sandbox.run("true")
        runs = median_seconds(steps, lambda n: sandbox.run(f"echo step {n}"))
        user = sandbox.policy.user
        engine = median_seconds(steps, lambda _n: capture(sandbox.container_id, ["true"], user))
    return runs, engine


def median_seconds(count: int, call: Callable[[int], object]) -> float:
    samples = []
    for n in range(count):
        started = time.perf_counter()
        call(n)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def bench_llm(server: ScriptedLLMServer, steps: int) -> float:
    """Median seconds of one litellm completion against the instant server."""
    from resolver.agent.llm import complete, llm_config_from
    from resolver.agent.tools import TOOLS
    from resolver.core.settings import get_settings

    config = llm_config_from(get_settings())
    server.set_script(lambda _request: tool("think", thought="x"))
    messages = [{"role": "user", "content": "hello"}]

    def call(_n: int) -> object:
        return complete(config, messages, TOOLS, on_retry=lambda _r: None, wait=lambda _s: False)

    return median_seconds(steps, call)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        server = ScriptedLLMServer([]).start()
        try:
            configure(tmp, server)
            from resolver.store.migrate import upgrade

            upgrade(os.environ["RESOLVER_DATABASE_URL"])
            llm = bench_llm(server, args.steps)
            exec_time, engine_exec = bench_exec(args.steps)
            loop = bench_loop(server, args.steps)
            mcp = bench_mcp(tmp, args.steps, median_seconds)
            tokens: TokenFigures = bench_tokens(args.steps)
        finally:
            server.stop()
    ms = 1000
    overhead = loop.total - loop.llm_server
    client = loop.llm_call - loop.llm_server
    own = overhead - client - loop.sandbox_exec
    print(f"steps: {args.steps} (+1 finish), each a real sandbox exec; milliseconds per step")
    print(f"loop, end to end                 {loop.total * ms:7.1f}")
    print(f"LLM server time                  {loop.llm_server * ms:7.1f}")
    print(f"overhead (end to end - server)   {overhead * ms:7.1f}   (target < 100)")
    print(f"  litellm client                 {client * ms:7.1f}")
    print(f"  sandbox exec                   {loop.sandbox_exec * ms:7.1f}")
    print(f"  the loop's own work            {own * ms:7.1f}   (DB, redaction, state)")
    print(f"baseline: raw sandbox exec       {exec_time * ms:7.1f}   (median of {args.steps})")
    print(f"baseline: one bare engine exec   {engine_exec * ms:7.1f}   (median of {args.steps})")
    print(f"baseline: litellm, one message   {llm * ms:7.1f}   (median of {args.steps})")
    print()
    print_mcp(mcp, args.steps)
    print()
    print_tokens(tokens)


if __name__ == "__main__":
    main()
