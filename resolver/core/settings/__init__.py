"""Settings: every knob is a `RESOLVER_*` environment variable or a line in `.env`."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Final, Literal, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

VAR_DIR = Path("var")


class ConfigError(Exception):
    """A setting is missing or invalid; the message is one line that says how to fix it.
    `variable` names it (`RESOLVER_…`) and `problem` says what is wrong, without the hint."""

    def __init__(self, message: str, variable: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.variable, self.problem = variable, problem


# A hint per setting, printed when that setting is missing or invalid.
HINTS: dict[str, str] = {
    "secret_keys": "generate one with `resolver keys generate` and put it in .env",
    "database_url": "use sqlite:///var/resolver.db or postgresql+psycopg://user:pass@host/db",
    "redis_url": "use redis://host:6379/0",
    "admin_token": "set a long random string; it guards the JSON API",
    "admins": "name each forge account by its numeric id, as forge:id:NUMBER (the forge as in its "
    "webhook path), or make a Resolver user an admin with `resolver users add --admin`",
}


class ProviderSettings(BaseSettings):
    """A provider's own settings, in its folder (`integrations/<name>/settings.py`), with the
    prefix `RESOLVER_<NAME>_`. The registry names each installed provider's class
    (`Provider.settings`); a composition root hands them to `get_settings.compose`, and the
    service's settings then carry one frozen section per provider, read from the same
    environment and `.env` and overlaid by the vault like the rest: `GitHubSettings.of(settings)`.

    Outside its section a setting is known by its flat name, the variable without `RESOLVER_`
    in lower case (`github_webhook_secret`): the vault stores it under that name, and a field
    that keeps an older variable name (`validation_alias`) is known by that one."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", frozen=True, populate_by_name=True
    )

    hints: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """A hint per field, printed when that setting is invalid."""
    oauth_client: ClassVar[tuple[str, ...]] = ()
    """The fields, client id then secret, of the OAuth app people sign in or prove an account
    with on this provider (what `resolver doctor` names when it is not set)."""

    @classmethod
    def of(cls, settings: Settings) -> Self:
        """This provider's section of the service's settings."""
        return settings.section(cls)

    @classmethod
    def variable(cls, field: str) -> str:
        """The environment variable of a field: `RESOLVER_GITHUB_WEBHOOK_SECRET`."""
        alias = cls.model_fields[field].validation_alias
        if isinstance(alias, str):
            return alias.upper()
        return f"{cls.model_config.get('env_prefix', '')}{field}".upper()

    @classmethod
    def names(cls) -> dict[str, str]:
        """Flat name → field: `{"github_webhook_secret": "webhook_secret", …}`."""
        return {cls.variable(f).lower().removeprefix("resolver_"): f for f in cls.model_fields}

    @classmethod
    def oauth_variables(cls) -> tuple[str, ...]:
        """`oauth_client`'s variables: `RESOLVER_GITHUB_CLIENT_ID`, …"""
        return tuple(cls.variable(field) for field in cls.oauth_client)

    def problems(self) -> tuple[tuple[str, str], ...]:
        """What is wrong with these settings together, found without the network, as (check
        name, what to fix) pairs for `resolver doctor`: a key file that is not there, say."""
        return ()


S = TypeVar("S", bound=ProviderSettings)


class Settings(BaseSettings):
    """Resolver's configuration. The settings reference (docs/reference/settings.md) is generated
    from these fields, and from each installed provider's section (`ProviderSettings`)."""

    model_config = SettingsConfigDict(
        env_prefix="RESOLVER_", env_file=".env", extra="ignore", frozen=True
    )
    _sections: Mapping[type[ProviderSettings], ProviderSettings] = PrivateAttr(default_factory=dict)

    # --- foundation
    database_url: str = Field(
        default=f"sqlite:///{VAR_DIR}/resolver.db",
        description="SQLAlchemy URL. SQLite is the embedded default; PostgreSQL for production.",
    )
    redis_url: str = Field(
        default="redis://127.0.0.1:6379/0", description="Celery broker and result backend."
    )
    secret_keys: SecretStr = Field(
        description="Comma-separated Fernet keys. The first encrypts; all of them decrypt.",
    )
    bot_name: str = Field(default="resolver", description="The @handle users mention.")
    admin_token: SecretStr | None = Field(
        default=None, description="Bearer token for the JSON API (`/api/jobs`)."
    )
    public_url: str = Field(
        default="http://127.0.0.1:8000", description="Base URL used in links to jobs."
    )
    admins: str = Field(
        default="",
        description=(
            "Web app admins, comma-separated forge accounts by numeric id (`forge:id:NUMBER`, "
            "the forge named as in its webhook path); a login or a user name is refused. Resolver "
            "users are made admins with `resolver users add --admin`."
        ),
    )
    session_hours: float = Field(
        default=12.0, gt=0, description="How long a web sign-in lasts, hours, from signing in."
    )
    session_idle_minutes: float = Field(
        default=120.0, gt=0, description="A web sign-in ends after this many minutes unused."
    )
    link_hours: float = Field(
        default=24.0, gt=0, description="How long the link in an unlinked sender's notice works."
    )
    linked_request_seconds: float = Field(
        default=3600.0,
        ge=0,
        description="After linking, the request behind the notice runs if it is this recent.",
    )
    access_cache_seconds: float = Field(
        default=60.0,
        ge=0,
        description="How long the web app trusts a forge's answer on who may read a repository.",
    )
    log_level: str = Field(default="INFO", description="Python log level.")
    log_format: Literal["text", "json"] = Field(default="text", description="Log line format.")

    # --- jobs and Celery
    job_time_limit: int = Field(
        default=3600,
        ge=10,
        description="Time limit of one agent job, in seconds; the job's own heartbeat enforces "
        "it, in any worker pool.",
    )
    lease_seconds: int = Field(
        default=10, ge=3, description="A running job's lease; a dead worker's job returns after it."
    )
    push_unfinished: bool = Field(
        default=False,
        description="Push the branch of a job that could not finish (no pull request is opened).",
    )
    status_interval: float = Field(
        default=15.0, ge=1, description="Least seconds between progress edits of a status message."
    )
    reconcile_interval: float = Field(
        default=5.0, gt=0, description="Seconds between reconciler sweeps (lost messages, leases)."
    )
    queued_grace_seconds: float = Field(
        default=30.0, ge=0, description="How long a queued job may lack its message before repair."
    )
    callback_stall_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long past its due time a pending callback may lack its message before "
        "repair.",
    )
    job_max_attempts: int = Field(
        default=3,
        ge=1,
        description="Runs of one job whose worker died before it is failed, visibly, for good.",
    )
    status_repost_seconds: float = Field(
        default=120.0,
        gt=0,
        description="Pause before a finished job's failed status message is posted again (it "
        "grows with each of the three rounds).",
    )
    queue_expiry_seconds: int = Field(
        default=6 * 3600,
        ge=60,
        description="A job still queued after this long (behind a cap) expires, visibly.",
    )

    # --- schedules (Renovate's prHourlyLimit and prConcurrentLimit, applied to runs)
    schedule_runs_per_hour: int = Field(
        default=60, ge=1, description="Scheduled runs the whole service starts per hour."
    )
    schedule_concurrent_runs: int = Field(
        default=4, ge=1, description="Scheduled runs the whole service runs at once."
    )
    schedule_open_prs: int = Field(
        default=50, ge=1, description="Open pull requests from schedules, service-wide."
    )
    schedule_repo_runs_per_hour: int = Field(
        default=4, ge=1, description="Scheduled runs per repository per hour, unless set for it."
    )
    schedule_repo_concurrent_runs: int = Field(
        default=1, ge=1, description="Scheduled runs at once per repository, unless set for it."
    )
    schedule_repo_open_prs: int = Field(
        default=5, ge=1, description="Open schedule pull requests per repository, unless set."
    )

    # --- webhook ingress
    max_body_bytes: int = Field(
        default=5 * 1024 * 1024, ge=1024, description="Largest webhook body accepted."
    )
    trigger_label: str = Field(default="resolver", description="Label that starts a job.")
    allowed_bots: str = Field(
        default="", description="Comma-separated bot logins allowed to trigger jobs."
    )
    max_jobs_per_user: int = Field(default=3, ge=1, description="Concurrent jobs per user.")
    max_jobs_per_repo: int = Field(default=5, ge=1, description="Concurrent jobs per repository.")
    bot_account_ids: str = Field(
        default="",
        description="Comma-separated account ids of the bot at the providers that mention by "
        "account (a tracker's account id, a forge's user id): mentions by account count, and its "
        "own events are ignored.",
    )

    # --- sandbox
    sandbox_image: str | None = Field(
        default=None, description="Sandbox image; default is the tag built from sandbox/."
    )
    sandbox_network: Literal["none", "bridge"] = Field(
        default="none",
        description="Deprecated: `bridge` means RESOLVER_SANDBOX_EGRESS=open when that is unset "
        "(through the job's proxy, no longer a direct bridge).",
    )
    sandbox_egress: Literal["none", "registries", "allowlist", "open"] | None = Field(
        default=None,
        description="The most a job's sandbox may reach, through a proxy of its own: none, the "
        "package registries this host uses (pip, npm, apt), the allowlist, or any public host. "
        "Default: none.",
    )
    sandbox_egress_allow: str = Field(
        default="",
        description="Domains for `allowlist` (comma- or space-separated; each covers its "
        "subdomains), reached on ports 80 (HTTP) and 443 (HTTPS); `domain:port` adds a port.",
    )
    sandbox_egress_uplink: str = Field(
        default="bridge", description="Docker network through which a job's proxy reaches out."
    )
    sandbox_runtime: Literal["runc", "runsc", "auto"] = Field(
        default="runc",
        description="The sandbox's OCI runtime: runc (the host's kernel), runsc (gVisor, a "
        "kernel of its own; the engine must have it, see Security model) or auto (runsc where "
        "the engine has it).",
    )
    sandbox_memory: str = Field(default="2g", description="Memory limit of a sandbox.")
    sandbox_pids: int = Field(default=512, ge=16, description="Process limit of a sandbox.")
    sandbox_cpus: float = Field(default=2.0, gt=0, description="CPU limit of a sandbox.")
    sandbox_pool_size: int = Field(
        default=0, ge=0, description="Warm containers kept ready; 0 turns the pool off."
    )
    sandbox_egress_spares: int = Field(
        default=1,
        ge=0,
        description="Warm spares each worker keeps for jobs with network (an internal network, "
        "its proxy and a sandbox on it), when RESOLVER_SANDBOX_EGRESS is not none; 0: none.",
    )
    retention_days: int | None = Field(
        default=None,
        ge=1,
        description="Prune the trajectories (commands, outputs, diffs) of finished jobs older "
        "than this many days; the job rows, outcomes, costs and links stay. Unset: keep all.",
    )
    sandbox_max_age: int = Field(
        default=7200, ge=60, description="Seconds after which the reaper removes a sandbox."
    )
    sandbox_reap_interval: int = Field(
        default=60,
        ge=5,
        description="Seconds between reaper sweeps; a dead worker's sandbox goes within one "
        "sweep of its job's lease running out.",
    )
    deployment_id: str | None = Field(
        default=None,
        description="Marks this deployment's sandboxes, so its reaper touches no others on a "
        "shared engine; default: derived from the database URL.",
    )
    sandbox_output_limit: int = Field(
        default=30_000, ge=1000, description="Characters of command output kept per call."
    )
    sandbox_workspace_root: Path = Field(
        default=Path("~/.local/state/resolver/clones"),
        description="Private host directory (mode 700) for the jobs' own clones; no sandbox "
        "mounts it. Keep it away from .env and the database.",
    )
    sandbox_workspace_size: str = Field(
        default="2g", description="Size cap of a sandbox's /workspace (tmpfs, counted as memory)."
    )
    sandbox_change_max_files: int = Field(
        default=1000, ge=1, description="Most files one change may add, change or delete."
    )
    sandbox_change_max_file_bytes: int = Field(
        default=10 * 2**20, ge=1, description="Largest file a change may hold, in bytes."
    )
    sandbox_change_max_bytes: int = Field(
        default=50 * 2**20, ge=1, description="Largest change in all, in bytes."
    )
    sandbox_setup_timeout: int = Field(
        default=600, ge=1, description="Timeout of a repository's .resolver/setup.sh."
    )
    sandbox_command_timeout: int = Field(
        default=300, ge=1, description="Default timeout of one agent command."
    )

    # --- LLM and agent
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

    # --- MCP servers a repository names in `.resolver/config.yml` (`mcp:`)
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

    # --- budgets shared by jobs (unset: no cap); a repository's config may only lower its own
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

    @field_validator("secret_keys")
    @classmethod
    def _valid_fernet_keys(cls, value: SecretStr) -> SecretStr:
        keys = [k.strip() for k in value.get_secret_value().split(",") if k.strip()]
        if not keys:
            raise ValueError("no key given")
        for key in keys:
            try:
                raw = base64.urlsafe_b64decode(key.encode())
            except (binascii.Error, ValueError):
                raw = b""
            if len(raw) != 32:
                raise ValueError("each key must be 32 url-safe base64-encoded bytes (a Fernet key)")
        return value

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        if not value.startswith(("sqlite", "postgresql")):
            raise ValueError("only sqlite:// and postgresql:// URLs are supported")
        return value

    @field_validator("admins")
    @classmethod
    def _admins_by_id(cls, value: str) -> str:
        for entry in _entries(value):
            admin_id(entry)
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return value

    @property
    def deployment(self) -> str:
        """RESOLVER_DEPLOYMENT_ID, or a stable id derived from the database (its password left
        out): two deployments on one engine have different databases."""
        if self.deployment_id:
            return self.deployment_id
        parts = urlsplit(self.database_url)
        if parts.scheme.startswith("sqlite"):
            where = str(Path(parts.path.removeprefix("/")).resolve())
        else:
            where = f"{parts.hostname}:{parts.port}{parts.path}"
        return hashlib.sha256(f"{parts.scheme}|{where}".encode()).hexdigest()[:12]

    @property
    def fernet_keys(self) -> list[str]:
        """The vault's keys, newest first."""
        return [k.strip() for k in self.secret_keys.get_secret_value().split(",") if k.strip()]

    @property
    def admin_ids(self) -> frozenset[tuple[str, str]]:
        """RESOLVER_ADMINS as (provider, numeric id) pairs."""
        return frozenset(admin_id(entry) for entry in _entries(self.admins))

    @property
    def allowed_bot_logins(self) -> frozenset[str]:
        return frozenset(b.strip().lower() for b in self.allowed_bots.split(",") if b.strip())

    @property
    def visibility_timeout(self) -> int:
        """Above the longest hard time limit, so a running task is never handed out twice."""
        return self.job_time_limit + 600

    def section(self, kind: type[S]) -> S:
        """The provider's section (`GitHubSettings.of(settings)` reads better). Read from the
        private dict itself: pydantic's `__getattr__` for a private attribute costs some 30
        times a field's read, and every webhook asks its provider's section."""
        private = self.__pydantic_private__ or {}
        found = private.get("_sections", {}).get(kind)
        if not isinstance(found, kind):
            raise ConfigError(
                f"{kind.__name__} is not part of these settings: a composition root composes "
                "each installed provider's settings (`get_settings.compose`)"
            )
        return found

    @property
    def sections(self) -> tuple[ProviderSettings, ...]:
        return tuple(self._sections.values())

    @property
    def kinds(self) -> tuple[type[ProviderSettings], ...]:
        """The provider settings classes these settings were composed with."""
        return tuple(self._sections)

    def with_section(self, section: ProviderSettings) -> Settings:
        """These settings with one provider's section replaced (tests, a preview)."""
        copy = self.model_copy()
        copy._sections = {**self._sections, type(section): section}
        return copy

    def names(self) -> tuple[str, ...]:
        """Every setting's flat name, the service's and its providers'."""
        return (*type(self).model_fields, *(n for s in self.sections for n in type(s).names()))

    def names_set(self) -> frozenset[str]:
        """The flat names of the settings given a value (by the environment, `.env` or the
        caller), not left at their defaults."""
        given = set(self.model_fields_set)
        for section in self.sections:
            given.update(
                n for n, f in type(section).names().items() if f in section.model_fields_set
            )
        return frozenset(given)

    def value(self, name: str) -> Any:
        """A setting by its flat name (`github_webhook_secret`), for generic code that lists
        settings by name (the vault, `/setup`'s origins, the secrets a job must not print)."""
        if name in type(self).model_fields:
            return getattr(self, name)
        for section in self.sections:
            field = type(section).names().get(name)
            if field is not None:
                return getattr(section, field)
        raise KeyError(name)

    def secrets(self) -> tuple[SecretStr, ...]:
        """Every secret setting that is set, the providers' included."""
        values = [getattr(self, n) for n in type(self).model_fields]
        values += [getattr(s, f) for s in self.sections for f in type(s).model_fields]
        return tuple(v for v in values if isinstance(v, SecretStr))


_ADMIN_ID = re.compile(r"([a-z][a-z0-9_-]*):id:([0-9]{1,20})")


def _entries(value: str) -> list[str]:
    return [entry.strip() for entry in value.split(",") if entry.strip()]


def admin_id(entry: str) -> tuple[str, str]:
    """A RESOLVER_ADMINS entry, `provider:id:NUMBER`, as (provider, id). A login can be renamed
    and then taken by someone else, and a user name can be claimed by whoever links first, so
    neither names an admin: such an entry is refused, not guessed at."""
    found = _ADMIN_ID.fullmatch(entry.lower())
    if found is None:
        provider = entry.partition(":")[0].strip().lower() if ":" in entry else "provider"
        raise ValueError(
            f"{entry!r} is not a forge account's numeric id; write {provider}:id:NUMBER "
            "(the number the forge's API gives the account)"
        )
    return found.group(1), str(int(found.group(2)))


Sections = Callable[[], Iterable[type[ProviderSettings]]]
"""The installed providers' settings classes (`integrations.registry.settings_classes`)."""


def web_address(value: str | None) -> str | None:
    """A provider's address, checked: http(s) and a host (a validator for provider settings)."""
    if value is None:
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// address with a host")
    return value


def _described(error: ValidationError, kind: type[BaseSettings] = Settings) -> ConfigError:
    """One line: the variable, what is wrong with it, and the hint."""
    first = error.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else "?"
    problem = "is missing" if first["type"] == "missing" else f"is invalid: {first['msg']}"
    hint = "see the settings table in docs/reference/settings.md"
    if issubclass(kind, ProviderSettings):
        known = {kind.variable(f): f for f in kind.model_fields}
        name = next((v for v, f in known.items() if field.upper() in (f.upper(), v)), field)
        hint = kind.hints.get(known.get(name, ""), hint)
    else:
        name, hint = f"RESOLVER_{field.upper()}", HINTS.get(field, hint)
    return ConfigError(f"{name} {problem} ({hint})", name, problem)


def compose(
    kinds: Iterable[type[ProviderSettings]],
    values: Mapping[str, Any] | None = None,
    *,
    env_file: bool = True,
) -> Settings:
    """The service's settings with a section per provider class in `kinds`, each read from the
    environment (and `.env` unless `env_file` is false), with `values` (by flat name) over
    them. ConfigError, one line naming the variable, when one is missing or invalid."""
    rest = dict(values or {})
    files: dict[str, Any] = {} if env_file else {"_env_file": None}
    try:
        settings = Settings(**files, **rest)
    except ValidationError as error:
        raise _described(error) from None
    sections: dict[type[ProviderSettings], ProviderSettings] = {}
    for kind in kinds:
        names = kind.names()
        mine = {names[n]: rest[n] for n in rest if n in names}
        try:
            sections[kind] = kind(**files, **mine)
        except ValidationError as error:
            raise _described(error, kind) from None
    settings._sections = sections
    return settings


def load_settings() -> Settings:
    """Read the settings, with the installed providers' sections (`get_settings.compose`), or
    raise ConfigError with one line naming the bad setting."""
    return compose(get_settings.kinds())


Overlay = Callable[[Settings], Settings]

OVERLAY_SECONDS: Final = 30.0
"""How long a process trusts the settings it read from the vault before reading them again."""


class _SettingsCache:
    """The process-wide settings: read once from the environment, with the providers' sections
    a composition root composed (`compose`), and, once a composition root has installed an
    overlay (the vault's stored settings, `store.configured`), with the overlay applied and
    re-applied every OVERLAY_SECONDS. `cache_clear()` forgets both readings."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sections: Sections = tuple
        self._overlay: Overlay | None = None
        self._base: Settings | None = None
        self._settings: Settings | None = None
        self._read_at = 0.0

    def __call__(self) -> Settings:
        found, overlay = self._settings, self._overlay
        if found is not None and (
            overlay is None or time.monotonic() - self._read_at < OVERLAY_SECONDS
        ):
            return found
        with self._lock:
            if self._base is None:
                self._base = load_settings()
            base = self._base
            settings = base if self._overlay is None else self._overlay(base)
            self._settings, self._read_at = settings, time.monotonic()
            return settings

    def install(self, overlay: Overlay) -> None:
        with self._lock:
            self._overlay, self._settings = overlay, None

    def compose(self, sections: Sections) -> None:
        """Each later reading carries a section per provider class that `sections()` names
        (asked at each reading): the composition roots pass the registry's
        `settings_classes`."""
        with self._lock:
            self._sections, self._base = sections, None
            self._settings = None

    def kinds(self) -> tuple[type[ProviderSettings], ...]:
        return tuple(self._sections())

    def cache_clear(self) -> None:
        with self._lock:
            self._base = self._settings = None


get_settings: Final = _SettingsCache()
"""The process-wide settings: `get_settings()`."""
