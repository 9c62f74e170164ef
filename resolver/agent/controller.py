"""The agent loop: ask the LLM, run its tool calls in the sandbox, record everything, stop.

Each step condenses the history if it grew too large, then checks cancellation and the limits
(no LLM call is made once one is reached, so no limit is ever exceeded), asks for the next
action, runs its tool calls in the sandbox, and checks whether the agent is stuck.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from resolver.agent import limits as stops
from resolver.agent.budget import running_stop
from resolver.agent.condense import (
    KEEP_RECENT_STEPS,
    CondensePlan,
    fallback_summary,
    mask_old_outputs,
    plan_condensation,
    summary_request,
)
from resolver.agent.events import Kind, build_messages, estimate_tokens, totals
from resolver.agent.llm import (
    TRANSIENT,
    ContextWindowExceededError,
    LLMCancelledError,
    LLMConfig,
    LLMError,
    LLMRequestError,
    Reply,
    Retry,
    Usage,
    complete,
    llm_config_from,
)
from resolver.agent.prompt import build_steering_message, build_system_prompt, build_task_message
from resolver.agent.review_tools import REVIEW_TOOLS, ReviewToolRunner
from resolver.agent.stuck import detect_stuck, turns_of
from resolver.agent.task import AgentResult, AgentTask
from resolver.agent.tools import TOOLS, Finish, ToolRunner
from resolver.agent.trajectory import Trajectory
from resolver.core import tracing
from resolver.core.job import JobContext
from resolver.core.logs import log, register_secret
from resolver.core.redact import Redactor
from resolver.core.settings import Settings
from sandbox import Sandbox, SandboxError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.agent.mcp import McpTools

logger = logging.getLogger(__name__)


class _StoppedError(Exception):
    """Unwinds the loop to record why it stopped."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def run_agent(
    session: Session,
    task: AgentTask,
    sandbox: Sandbox,
    ctx: JobContext,
    llm: LLMConfig | None = None,
    mcp: McpTools | None = None,
) -> AgentResult:
    """Run the loop until the agent finishes or something stops it. Never changes job state.
    `session` is the caller's: each event is committed in it as the loop goes."""
    settings = ctx.settings
    config = llm or llm_config_from(settings)
    known = job_secrets(task, settings, config)
    for value in known:
        # Among the most recent: a job's tokens are new each time, and the settings' secrets
        # are masked for good where the settings are read.
        register_secret(value, passing=True)
    loop = AgentLoop(session, task, sandbox, ctx, config, settings, Redactor(known), mcp)
    ctx.on_cancel.append(sandbox.interrupt)
    try:
        return loop.run()
    finally:
        ctx.on_cancel.remove(sandbox.interrupt)


def job_secrets(task: AgentTask, settings: Settings, config: LLMConfig) -> tuple[str, ...]:
    """Every secret value the job knows: the task's, the settings' and the LLM key."""
    values = [*task.secrets, config.api_key or "", *settings.secret_values()]
    return tuple(v.strip() for v in values if v.strip())


class AgentLoop:
    def __init__(
        self,
        session: Session,
        task: AgentTask,
        sandbox: Sandbox,
        ctx: JobContext,
        config: LLMConfig,
        settings: Settings,
        redactor: Redactor,
        mcp: McpTools | None = None,
    ) -> None:
        self.task, self.ctx, self.config = task, ctx, config
        self.condense_tokens = settings.llm_condense_tokens
        self.bot_name = settings.bot_name
        self.push_unfinished = settings.push_unfinished
        self.session = session
        self.trajectory = Trajectory(session, task.job_id, redactor)
        runner = ReviewToolRunner if task.review else ToolRunner
        self.tools = runner(
            sandbox, settings.sandbox_output_limit, float(settings.sandbox_command_timeout)
        )
        self.tool_schemas = REVIEW_TOOLS if task.review else TOOLS
        self.started = time.monotonic()
        self.nonce = secrets.token_hex(6)
        self.mcp = mcp
        """The repository's MCP servers' tools, beside the built-in ones."""

    def run(self) -> AgentResult:
        self._record_task()
        try:
            return self._loop()
        except _StoppedError as stop:
            return self._stop(stop.reason, stop.detail)
        except SandboxError as error:
            self._stop(stops.SANDBOX_ERROR, str(error))
            raise

    def _loop(self) -> AgentResult:
        while True:
            self._condense_if_large()
            self._check_limits()
            self._take_steering()
            with tracing.span("agent.step"):
                asked = time.monotonic()
                reply = self._ask()
                finish = self._act(reply, time.monotonic() - asked)
            if finish is not None:
                return self._finish(finish)
            stuck = detect_stuck(turns_of(self.trajectory.events))
            if stuck:
                raise _StoppedError(stuck)

    def _record_task(self) -> None:
        nonce = self.nonce
        payload = {
            "system": build_system_prompt(self.task, nonce, self.bot_name),
            "message": build_task_message(self.task, nonce),
            "instruction": self.task.instruction,
            "model": self.config.model,
            "limits": asdict(self.task.limits),
        }
        self.trajectory.append(Kind.TASK, payload)

    def _take_steering(self) -> None:
        """Messages sent to the running job join the conversation before the next step."""
        if self.ctx.inbox is None:
            return
        step = totals(self.trajectory.events).steps + 1
        for message in self.ctx.inbox(step):
            content = build_steering_message(message.author, message.text, self.nonce)
            payload = {"content": content, "author": message.author}
            self.trajectory.append(Kind.STEER, payload)
            log(logger, logging.INFO, "agent.steered", job=self.task.job_id, step=step)

    # --- limits

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _seconds_left(self) -> float:
        return max(0.0, self.task.limits.wall_clock_seconds - self._elapsed())

    def _limit(self) -> str | None:
        spent = totals(self.trajectory.events)
        cancelled = self.ctx.cancelled.is_set()
        reason = stops.limit_reached(spent, self.task.limits, self._elapsed(), cancelled)
        job_id, caps = self.task.job_id, self.task.caps
        return reason or running_stop(self.session, job_id, caps, self.push_unfinished)

    def _check_limits(self) -> None:
        reason = self._limit()
        if reason:
            raise _StoppedError(reason)

    # --- the LLM

    def _ask(self) -> Reply:
        overflows = 0
        while True:
            try:
                return self._complete(self._messages(), tools=True)
            except ContextWindowExceededError:
                overflows += 1
                if overflows > 2 or not self._shrink():
                    raise _StoppedError(stops.CONTEXT_WINDOW) from None

    def _messages(self) -> list[dict[str, Any]]:
        """The conversation to send: the history with older steps' outputs cut short."""
        return build_messages(mask_old_outputs(self.trajectory.events))

    def _shrink(self) -> bool:
        """After an overflow, condense all but the last step, or everything if that is all."""
        return self._condense(stops.CONTEXT_WINDOW, 1) or self._condense(stops.CONTEXT_WINDOW, 0)

    def _complete(self, messages: list[dict[str, Any]], tools: bool) -> Reply:
        try:
            with tracing.span("llm.call", **{"llm.model": self.config.model}):
                started = time.monotonic()
                reply = complete(
                    self.config,
                    messages,
                    (self.tool_schemas + (self.mcp.schemas if self.mcp else ())) if tools else None,
                    on_retry=self._record_retry,
                    wait=self.ctx.cancelled.wait,
                    timeout=min(self.config.timeout, max(self._seconds_left(), 1.0)),
                )
                tracing.note(**_llm_attributes(reply, time.monotonic() - started))
            return reply
        except LLMCancelledError:
            raise _StoppedError(stops.CANCELLED) from None
        except TRANSIENT as error:
            raise _StoppedError(stops.LLM_UNAVAILABLE, str(error)) from None
        except LLMRequestError as error:
            raise _StoppedError(stops.LLM_ERROR, str(error)) from None

    def _record_retry(self, retry: Retry) -> None:
        payload = {
            "attempt": retry.attempt,
            "error": retry.error,
            "delay_seconds": round(retry.delay_seconds, 2),
        }
        self.trajectory.append(Kind.LLM_RETRY, payload)
        log(logger, logging.WARNING, "agent.llm_retry", job=self.task.job_id, **payload)

    # --- condensation

    def _condense_if_large(self) -> None:
        size = estimate_tokens(self._messages())
        if size > self.condense_tokens:
            self._condense("threshold", KEEP_RECENT_STEPS)

    def _condense(self, reason: str, keep_recent_steps: int) -> bool:
        plan = plan_condensation(self.trajectory.events, keep_recent_steps)
        if plan is None:
            return False
        summary, method, usage = self._summarise(plan)
        payload: dict[str, Any] = {
            "reason": reason,
            "first_seq": plan.first_seq,
            "up_to_seq": plan.up_to_seq,
            "steps": plan.steps,
            "method": method,
            "summary": summary,
        }
        if usage is not None:
            payload["usage"] = usage.as_dict()
        self.trajectory.append(Kind.CONDENSATION, payload)
        return True

    def _summarise(self, plan: CondensePlan) -> tuple[str, str, Usage | None]:
        """The LLM's summary, or a plain list of the steps when that call fails or can't be paid."""
        fallback = fallback_summary(plan)
        if self._limit() is not None:
            return fallback, "fallback", None
        try:
            reply = self._complete(summary_request(plan), tools=False)
        except _StoppedError as stop:
            if stop.reason == stops.CANCELLED:
                raise
            log(logger, logging.WARNING, "agent.summary_failed", error=stop.reason)
            return fallback, "fallback", None
        except LLMError as error:  # the summary request itself overflowed
            log(logger, logging.WARNING, "agent.summary_failed", error=str(error))
            return fallback, "fallback", None
        if not reply.content.strip():
            return fallback, "fallback", reply.usage
        return reply.content.strip(), "llm", reply.usage

    # --- acting

    def _act(self, reply: Reply, llm_seconds: float) -> Finish | None:
        step = totals(self.trajectory.events).steps + 1
        tracing.note(step=step)
        spent = {"usage": reply.usage.as_dict(), "llm_seconds": round(llm_seconds, 4)}
        if not reply.tool_calls:
            self.trajectory.append(Kind.MESSAGE, {"step": step, "content": reply.content, **spent})
            return None
        for index, call in enumerate(reply.tool_calls):
            action: dict[str, Any] = {
                "step": step,
                "call_id": call.id,
                "tool": call.name,
                "arguments": call.arguments,
            }
            if index == 0:
                action.update(thought=reply.content, **spent)
            self.trajectory.append(Kind.ACTION, action)
            finish = self._observe(step, call.id, call.name, call.arguments)
            if finish is not None:
                return finish
        return None

    def _observe(self, step: int, call_id: str, tool: str, arguments: str) -> Finish | None:
        if self.ctx.cancelled.is_set():
            raise _StoppedError(stops.CANCELLED)
        with tracing.span("agent.tool", tool=tool):
            if self.mcp is not None and self.mcp.owns(tool):
                observation = self.mcp.run(tool, arguments, self._seconds_left(), self.nonce)
            else:
                observation = self.tools.run(tool, arguments, self._seconds_left())
            tracing.note(error=observation.error, exit_code=observation.details.get("exit_code"))
        payload = {
            "step": step,
            "call_id": call_id,
            "tool": tool,
            "content": observation.content,
            "error": observation.error,
            **observation.details,
        }
        self.trajectory.append(Kind.OBSERVATION, payload)
        log(logger, logging.INFO, "agent.step", job=self.task.job_id, step=step, tool=tool)
        if self.ctx.cancelled.is_set():
            raise _StoppedError(stops.CANCELLED)
        return observation.finish

    # --- the end

    def _result(self, outcome: Any, summary: str, stop_reason: str | None) -> AgentResult:
        spent = totals(self.trajectory.events)
        return AgentResult(
            outcome=outcome,
            summary=summary,
            stop_reason=stop_reason,
            steps=spent.steps,
            cost_usd=spent.cost_usd,
            prompt_tokens=spent.prompt_tokens,
            completion_tokens=spent.completion_tokens,
        )

    def _finish(self, finish: Finish) -> AgentResult:
        self.trajectory.append(Kind.FINISH, {"outcome": finish.outcome, "summary": finish.summary})
        log(logger, logging.INFO, "agent.finished", job=self.task.job_id, outcome=finish.outcome)
        ended = self._result(finish.outcome, finish.summary, None)
        return replace(ended, thread_replies=dict(finish.threads)) if finish.threads else ended

    def _stop(self, reason: str, detail: str = "") -> AgentResult:
        spent = totals(self.trajectory.events)
        message = stops.stop_message(reason, self.task.limits, spent, detail)
        self.trajectory.append(Kind.STOP, {"reason": reason, "message": message})
        log(logger, logging.INFO, "agent.stopped", job=self.task.job_id, reason=reason)
        return self._result("stopped", message, reason)


def _llm_attributes(reply: Reply, seconds: float) -> dict[str, tracing.Value | None]:
    """What a trace shows of one model call: its tokens, cost and latency, never its text."""
    usage = reply.usage
    return {
        "llm.tokens.prompt": usage.prompt_tokens,
        "llm.tokens.completion": usage.completion_tokens,
        "llm.tokens.cached": usage.cached_tokens,
        "llm.cost_usd": usage.cost_usd,
        "llm.latency_ms": round(seconds * 1000, 1),
    }
