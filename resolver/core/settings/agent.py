"""The service's agent settings: the model, its limits and prices, MCP servers and budgets."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class LlmFields(BaseModel):
    """LLM and agent."""

    llm_model: str | None = Field(default=None, description="LiteLLM model string.")
    llm_models: str | None = Field(
        default=None,
        description=(
            "Other models a repository (`model:`) or a request (`model=NAME`) may pick, "
            "comma-separated; the default model is always allowed."
        ),
    )
    llm_api_key: SecretStr | None = Field(default=None, description="LLM provider API key.")
    llm_base_url: str | None = Field(default=None, description="LLM API base URL.")
    llm_max_iterations: int = Field(default=50, ge=1, description="Agent steps per job.")
    llm_max_cost_usd: float = Field(default=4.0, gt=0, description="Spend limit per job, USD.")
    llm_max_tokens: int = Field(
        default=2_000_000, ge=1000, description="Token budget per job (applies when cost unknown)."
    )
    llm_input_cost_per_token: float | None = Field(
        default=None, ge=0, description="Price per input token for models litellm cannot price."
    )
    llm_output_cost_per_token: float | None = Field(
        default=None, ge=0, description="Price per output token for models litellm cannot price."
    )
    llm_wall_clock_seconds: int = Field(
        default=2700, ge=10, description="Wall-clock limit of one agent run, in seconds."
    )
    llm_timeout: float = Field(default=180.0, gt=0, description="Timeout of one LLM call, seconds.")
    llm_max_retries: int = Field(
        default=5, ge=0, description="Retries of an LLM call on rate limits and outages."
    )
    llm_condense_tokens: int = Field(
        default=100_000,
        ge=1000,
        description="History size (estimated tokens) above which older steps are summarised.",
    )
    llm_cached_input_cost_per_token: float | None = Field(
        default=None,
        ge=0,
        description="Price per input token read from the provider's prompt cache, for models "
        "litellm cannot price; default: the input price.",
    )


class McpFields(BaseModel):
    """MCP servers a repository names in `.resolver/config.yml` (`mcp:`)."""

    mcp: Literal["on", "off"] = Field(
        default="on",
        description="`off` ignores every repository's `mcp:` section: the agent gets no MCP tools.",
    )
    mcp_allow: str = Field(
        default="",
        description="Hosts a repository's remote (streamable HTTP) MCP servers may be on "
        "(comma- or space-separated; each covers its subdomains). Empty: no remote servers.",
    )
    mcp_timeout: float = Field(
        default=60.0, gt=0, description="Seconds an MCP server has to start or answer one call."
    )
    mcp_max_bytes: int = Field(
        default=1_000_000,
        ge=10_000,
        description="Bytes an MCP server's one message may have; a longer one cuts the server off.",
    )


class BudgetFields(BaseModel):
    """Budgets shared by jobs (unset: no cap); a repository's config may only lower its own."""

    budget_repo_daily_usd: float | None = Field(
        default=None, gt=0, description="Spend cap per repository per UTC day, USD."
    )
    budget_requester_daily_usd: float | None = Field(
        default=None, gt=0, description="Spend cap per requester per UTC day, USD."
    )
    budget_service_monthly_usd: float | None = Field(
        default=None, gt=0, description="Spend cap of the whole service per UTC month, USD."
    )
    budget_repo_daily_tokens: int | None = Field(
        default=None, ge=1, description="Token cap per repository per UTC day (unpriced models)."
    )
    budget_requester_daily_tokens: int | None = Field(
        default=None, ge=1, description="Token cap per requester per UTC day (unpriced models)."
    )
    budget_service_monthly_tokens: int | None = Field(
        default=None, ge=1, description="Token cap of the whole service per UTC month."
    )
