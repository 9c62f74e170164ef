"""The agent: an event-sourced loop of LLM tool calls run in a sandbox.

`run_agent` runs the loop on an open sandbox; `run_session` adds the clone, setup and diff
around it (the worker's and `resolver run`'s path).
"""

from resolver.agent.controller import run_agent
from resolver.agent.llm import LLMConfig, llm_config_from
from resolver.agent.session import SessionRequest, SessionResult, run_result, run_session
from resolver.agent.task import (
    AgentLimits,
    AgentResult,
    AgentTask,
    InvalidLimitError,
    TaskContext,
    limits_from,
)
from resolver.contract.outbound import Comment, ReviewThread

__all__ = [
    "AgentLimits",
    "AgentResult",
    "AgentTask",
    "Comment",
    "InvalidLimitError",
    "LLMConfig",
    "ReviewThread",
    "SessionRequest",
    "SessionResult",
    "TaskContext",
    "limits_from",
    "llm_config_from",
    "run_agent",
    "run_result",
    "run_session",
]
