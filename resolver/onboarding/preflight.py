"""Preflight: is each provider set up so that the first mention works? Run by `resolver doctor`
and shown by `/setup`.

    checks = provider_checks(get_settings())               # network: a few seconds at most
    checks = provider_checks(get_settings(), offline=True) # only what needs no network
    for check in checks: check.name, check.status ("ok" | "off" | "fail"), check.detail

Per configured provider, through its `Provider.preflight` (`integrations/<p>/preflight.py`):
its credentials work, the app has the permissions and events it needs, its webhook points
here and a test delivery comes back. The LLM key and model must answer a one-token completion,
and every webhook secret must be strong. It reads only the settings and the store, returns
data (never raises, prints nothing), and no detail holds a secret (each is redacted again here).

It blocks for up to DEADLINE_SECONDS: a web page calls it off the event loop
(`starlette.concurrency.run_in_threadpool`). It has effects at the providers: GitHub redelivers
the App's latest delivery (same GUID, so the ingress drops it as a duplicate) and GitLab sends
a test note event.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from typing import Final

from sqlalchemy.exc import SQLAlchemyError

from integrations import registry
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.inbound import secret_value
from resolver.core.logs import log, redact, register_secret
from resolver.core.settings import Settings
from resolver.onboarding.store import forge_repositories
from resolver.onboarding.strength import weakness

logger = logging.getLogger(__name__)

DEADLINE_SECONDS: Final = 25.0
"""How long all network checks together may take; each HTTP call has a shorter timeout."""


def provider_checks(settings: Settings, *, offline: bool = False) -> list[Check]:
    """Every provider's preflight and the LLM (in parallel), then the webhook secrets'
    strength; `offline`, only the strength."""
    for name in _secret_fields():
        value = secret_value(settings.value(name))
        if value:
            register_secret(value)
    strength = [check for name in _secret_fields() if (check := secret_check(settings, name))]
    if offline:
        return strength
    if settings.llm_model:
        import resolver.agent.probe  # noqa: F401  litellm takes seconds to import: not on the clock
    online = _run_parallel([*_provider_runs(settings), ("llm", partial(_llm_checks, settings))])
    return [_redacted(check) for check in [*online, *strength]]


def secret_check(settings: Settings, name: str) -> Check | None:
    """The strength of one webhook secret setting; None when it is not set."""
    value = secret_value(settings.value(name))
    if value is None:
        return None
    variable, provider = f"RESOLVER_{name.upper()}", _provider_of(name)
    reason = weakness(value)
    if reason is None:
        return Check(f"{provider} secret {variable}", "ok", f"{len(value)} characters, random")
    return Check(
        f"{provider} secret {variable}",
        "fail",
        f"{variable} is weak ({reason}): rotate it with `resolver setup {provider} "
        "--rotate` or set a random value of 32+ characters",
    )


def llm_check(settings: Settings) -> Check:
    """A one-token completion with the configured model, key and base URL."""
    if not settings.llm_model:
        return Check("llm answers", "off", "set RESOLVER_LLM_MODEL to check the model answers")
    from resolver.agent.llm import llm_config_from
    from resolver.agent.probe import probe

    result = probe(llm_config_from(settings))
    model, where = settings.llm_model, settings.llm_base_url or (result.provider or "its API")
    fixes = {
        "ok": f"{model} answered a one-token completion",
        "refused": f"RESOLVER_LLM_API_KEY is refused by {result.provider or where}: set a "
        "valid key",
        "unknown_model": f"{where} does not know the model {model!r}: fix RESOLVER_LLM_MODEL"
        f" ({result.detail})",
        "unreachable": f"{where} cannot be reached for {model}: check RESOLVER_LLM_BASE_URL and "
        "the network",
        "failed": f"{model} did not answer: {result.detail}",
    }
    return Check("llm answers", "ok" if result.verdict == "ok" else "fail", fixes[result.verdict])


def _llm_checks(settings: Settings) -> list[Check]:
    return [llm_check(settings)]


def _secret_fields() -> tuple[str, ...]:
    return tuple(field for item in registry.installed() for field in item.secrets)


def _provider_of(field: str) -> str:
    return next(item.name for item in registry.installed() if field in item.secrets)


Run = tuple[str, Callable[[], Sequence[Check]]]


def _provider_runs(settings: Settings) -> list[Run]:
    repositories = _known_repositories()
    runs: list[Run] = []
    for item in registry.installed():
        preflight = item.preflight
        if preflight is not None:
            scope = PreflightScope(settings, repositories.get(item.name, ()))
            runs.append((item.name, partial(preflight, scope)))
    return runs


def _known_repositories() -> dict[str, tuple[str, ...]]:
    try:
        return forge_repositories()
    except SQLAlchemyError as error:  # the database check reports it; check without repositories
        log(logger, logging.INFO, "preflight.no_repositories", error=type(error).__name__)
        return {}


def _run_parallel(runs: list[Run]) -> list[Check]:
    """Each run in its own thread; their checks in the order given. A run that raises or
    outlives the deadline is one failing check, not an exception."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    with ThreadPoolExecutor(max_workers=len(runs), thread_name_prefix="preflight") as pool:
        futures = [(name, pool.submit(run)) for name, run in runs]
        results: list[Check] = []
        for name, future in futures:
            try:
                results += future.result(timeout=max(deadline - time.monotonic(), 0.0))
            except FutureTimeout:
                results.append(Check(name, "fail", f"no answer within {DEADLINE_SECONDS:.0f} s"))
            except Exception as error:  # a bug in a check must not hide the other checks
                logger.exception("preflight.crashed", extra={"fields": {"provider": name}})
                results.append(Check(name, "fail", f"the check failed: {type(error).__name__}"))
        return results


def _redacted(check: Check) -> Check:
    return Check(check.name, check.status, redact(check.detail))
