"""Which limit stops the loop, and how that is explained to the user. Pure."""

from __future__ import annotations

from typing import Final

from resolver.agent.events import Totals
from resolver.agent.task import AgentLimits
from resolver.core.budgets import BUDGET

CANCELLED: Final = "cancelled"
MAX_ITERATIONS: Final = "max_iterations"
MAX_COST: Final = "max_cost"
MAX_TOKENS: Final = "max_tokens"
WALL_CLOCK: Final = "wall_clock"
LLM_UNAVAILABLE: Final = "llm_unavailable"
LLM_ERROR: Final = "llm_error"
CONTEXT_WINDOW: Final = "context_window"
SANDBOX_ERROR: Final = "sandbox_error"


def limit_reached(
    totals: Totals, limits: AgentLimits, elapsed: float, cancelled: bool
) -> str | None:
    """The limit that forbids another LLM call, or None. The budget fails closed."""
    if cancelled:
        return CANCELLED
    if totals.steps >= limits.max_iterations:
        return MAX_ITERATIONS
    if totals.cost_usd is not None and totals.cost_usd >= limits.max_cost_usd:
        return MAX_COST
    # Without a price the token budget stands in for the cost budget.
    if totals.cost_usd is None and totals.tokens >= limits.max_tokens:
        return MAX_TOKENS
    if elapsed >= limits.wall_clock_seconds:
        return WALL_CLOCK
    return None


def stop_message(reason: str, limits: AgentLimits, totals: Totals, detail: str = "") -> str:
    """One sentence for the user on why the job stopped."""
    cost = "unknown" if totals.cost_usd is None else f"${totals.cost_usd:.2f}"
    messages = {
        CANCELLED: "The job was cancelled.",
        MAX_ITERATIONS: f"Stopped after reaching the limit of {limits.max_iterations} steps.",
        MAX_COST: f"Stopped: the job spent {cost} of its ${limits.max_cost_usd:.2f} budget.",
        MAX_TOKENS: f"Stopped: the job used {totals.tokens} of its {limits.max_tokens} token "
        "budget (the model's price is unknown).",
        WALL_CLOCK: f"Stopped at the time limit of {limits.wall_clock_seconds:.0f} seconds.",
        LLM_UNAVAILABLE: f"Stopped: the LLM provider stayed unavailable ({detail}).",
        LLM_ERROR: f"Stopped: the LLM provider refused the request ({detail}).",
        CONTEXT_WINDOW: "Stopped: the conversation no longer fits the model's context window, "
        "even after condensing it.",
        SANDBOX_ERROR: f"Stopped: the sandbox failed ({detail}).",
    }
    if reason.startswith(f"{BUDGET}: "):
        return reason.removeprefix(f"{BUDGET}: ")
    if reason.startswith("stuck"):
        return f"Stopped: the agent was going in circles ({reason.removeprefix('stuck: ')})."
    return messages.get(reason, f"Stopped: {reason}.")
