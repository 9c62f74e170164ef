"""`resolver doctor`: each dependency and setting, checked, with how to fix what fails; then
each provider's preflight (`onboarding.preflight`), unless `--offline`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator

from integrations import registry
from resolver.broker import locks
from resolver.contract.checks import Check
from resolver.core.settings import ConfigError, Settings, get_settings
from resolver.onboarding.described import setup_of
from resolver.onboarding.preflight import provider_checks
from sandbox import image_tag

__all__ = ["CHECKS", "Check", "run_checks"]


def _database(settings: Settings) -> Check:
    from resolver.store.migrate import schema_state

    try:
        current, head, has_jobs = schema_state(settings.database_url)
    except Exception as error:  # any failure to connect is reported, with its type
        return Check(
            "database",
            "fail",
            f"cannot connect ({type(error).__name__}); check RESOLVER_DATABASE_URL",
        )
    if not has_jobs or current != head:
        return Check(
            "database", "fail", f"schema at {current}, code at {head}: run `resolver db upgrade`"
        )
    return Check("database", "ok", f"schema {head}")


def _redis(settings: Settings) -> Check:
    try:
        version = locks.server_version(settings.redis_url, timeout=2)
    except locks.BrokerError as error:
        return Check(
            "redis",
            "fail",
            f"{type(error).__name__}: start redis-server or fix "
            "RESOLVER_REDIS_URL (make demo starts one)",
        )
    return Check("redis", "ok", f"redis {version}")


def _docker(_settings: Settings) -> Check:
    if shutil.which("docker") is None:
        return Check("docker engine", "fail", "no docker client; install docker.io")
    done = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}} {{.Driver}}"],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    if done.returncode != 0:
        return Check(
            "docker engine",
            "fail",
            "the engine does not answer: start dockerd (make demo starts one as root on Debian)",
        )
    return Check("docker engine", "ok", done.stdout.strip())


def _sandbox_image(settings: Settings) -> Check:
    tag = settings.sandbox_image or image_tag()
    done = subprocess.run(
        ["docker", "image", "inspect", tag], capture_output=True, timeout=20, check=False
    )
    if done.returncode != 0:
        return Check(
            "sandbox image", "fail", f"{tag} is missing: run `resolver sandbox build --offline`"
        )
    return Check("sandbox image", "ok", tag)


# The kernel release gVisor reports to what runs inside it.
GVISOR_KERNEL = "4.4.0"


def _sandbox_runtime(settings: Settings) -> Check:
    """Start a real sandbox and read the kernel inside: the runtime it got, not the one asked."""
    from resolver.agent.sandboxes import policy_from_settings
    from sandbox import SandboxError, open_sandbox

    wanted = settings.sandbox_runtime
    try:
        with open_sandbox("doctor-runtime", policy_from_settings(settings)) as box:
            kernel = box.run("uname -r").output.strip()
    except SandboxError as error:
        return Check("sandbox runtime", "fail", f"{wanted}: {error}")
    got = "runsc (gVisor)" if kernel == GVISOR_KERNEL else "runc (the host's kernel)"
    ok = wanted != "runsc" or kernel == GVISOR_KERNEL
    return Check("sandbox runtime", "ok" if ok else "fail", f"{wanted}: {got}, kernel {kernel}")


# Reserved by RFC 2606: never a real host, so it can only be refused.
_DENIED_EXAMPLE = "denied.invalid"
_PROBE = "curl -k -sS -m 20 -o /dev/null -w '%{{http_code}}' {url}"


def _egress(settings: Settings) -> Check:
    """Start a real sandbox under the configured egress: an allowed host answers, a denied one
    is refused by the proxy; under `none`, the sandbox has loopback alone."""
    from resolver.agent.egress import egress_level, operator_maximum
    from resolver.agent.sandboxes import policy_from_settings
    from sandbox import EgressConfigError, EgressPlan, SandboxError, open_sandbox, proxy_image_tag

    level = egress_level(settings)
    try:
        maximum, env = operator_maximum(settings)
        policy = policy_from_settings(settings)
        plan = None if maximum.nothing else EgressPlan(maximum, env)
        if plan is not None and not _image_present(proxy_image_tag()):
            return Check("egress", "fail", "proxy image missing: run `resolver sandbox build`")
        with open_sandbox("doctor-egress", policy, egress=plan) as box:
            if plan is None:
                interfaces = box.run("tail -n +3 /proc/net/dev | cut -d: -f1").output.split()
                ok = interfaces == ["lo"]
                return Check("egress", "ok" if ok else "fail", f"none: interfaces {interfaces}")
            allowed = _allowed_example(maximum.domains)
            reached = box.run(_PROBE.format(url=f"https://{allowed}/"))
            denied = _DENIED_EXAMPLE if maximum.domains else "127.0.0.1"
            refused = box.run(_PROBE.format(url=f"http://{denied}/"))
    except (EgressConfigError, SandboxError) as error:
        return Check("egress", "fail", f"{level}: {error}")
    went = reached.ok and not reached.blocked
    stopped = refused.output.strip() == "403" and bool(refused.blocked)
    detail = (
        f"{level}: {allowed} {'reachable' if went else 'NOT reachable: ' + reached.output[-200:]}"
        f"; {denied} {'refused by the proxy' if stopped else 'NOT refused'}"
    )
    return Check("egress", "ok" if went and stopped else "fail", detail)


def _allowed_example(domains: tuple[str, ...]) -> str:
    # Under `open` there is no list: a registry of this host's is a public host to try.
    from resolver.agent.egress import host_registries

    return next(iter(domains or host_registries().hosts), _DENIED_EXAMPLE)


def _image_present(tag: str) -> bool:
    done = subprocess.run(
        ["docker", "image", "inspect", tag], capture_output=True, timeout=20, check=False
    )
    return done.returncode == 0


def _llm(settings: Settings) -> Check:
    if not settings.llm_model:
        return Check(
            "llm",
            "off",
            "set RESOLVER_LLM_MODEL (and RESOLVER_LLM_API_KEY) for real "
            "jobs; make demo uses its scripted stand-in",
        )
    key = "with key" if settings.llm_api_key else "no RESOLVER_LLM_API_KEY (fine for local models)"
    return Check("llm", "ok", f"{settings.llm_model}, {key}")


def _admin(settings: Settings) -> Check:
    if settings.admin_token is None:
        return Check("admin api", "off", "set RESOLVER_ADMIN_TOKEN to open /api/jobs to scripts")
    return Check("admin api", "ok", "bearer token set")


def _sign_in(settings: Settings) -> Check:
    forges = [item.display_name for item in registry.sign_ins(settings)]
    if not forges:
        return Check(
            "web sign-in", "off", f"set {_sign_in_hint()} so people can open the job links"
        )
    signs_in = {item.name for item in registry.sign_ins(settings)}
    elsewhere = sorted({provider for provider, _ in settings.admin_ids} - signs_in)
    if elsewhere:
        return Check(
            "web sign-in",
            "fail",
            f"RESOLVER_ADMINS names accounts on {', '.join(elsewhere)}, which nobody signs in "
            f"with here (sign-in is with {', '.join(sorted(signs_in))})",
        )
    count = len(settings.admin_ids)
    admins = (
        f"{count} admin account{'s' if count != 1 else ''} by id in RESOLVER_ADMINS"
        if count
        else "no RESOLVER_ADMINS (see users add --admin)"
    )
    return Check("web sign-in", "ok", f"with {', '.join(forges)}; {admins}")


def _variables(names: tuple[str, ...]) -> str:
    return " and ".join(f"RESOLVER_{name.upper()}" for name in names)


def _sign_in_hint() -> str:
    """The first forge's sign-in settings, and the others by name (`… (or the GitLab pair)`)."""
    forges = [(item, item.sign_in) for item in registry.installed() if item.sign_in is not None]
    if not forges:
        return "a forge's OAuth client (no installed forge offers sign-in)"
    alternatives = "".join(f" (or the {item.display_name} pair)" for item, _ in forges[1:])
    return _variables(forges[0][1].client_settings) + alternatives


def _proofs(settings: Settings) -> Check:
    """Who can link a chat or tracker account from a public link (Jira, Linear, a Slack link
    that could not be sent privately): those whose provider's OAuth client is set."""
    ready = {item.name for item in registry.proofs(settings)}
    offered = [item for item in registry.installed() if item.proof is not None]
    missing = [item for item in offered if item.name not in ready]
    if not registry.sign_ins(settings) or not missing:
        named = ", ".join(item.display_name for item in offered if item.name in ready)
        return Check("account proofs", "ok" if named else "off", named or "no web sign-in")
    names = ", ".join(
        f"{item.display_name} ({_variables(item.proof.client_settings[:1])})"
        for item in missing
        if item.proof is not None
    )
    return Check(
        "account proofs",
        "off",
        f"{names} and the secret: without them those senders' links ask for an admin",
    )


def _providers(settings: Settings) -> Iterator[Check]:
    for item in registry.installed():
        provider, fields = item.name, item.secrets
        if item.integration.enabled(settings):
            yield Check(f"provider {provider}", "ok", "webhook secret set: route on")
        else:
            names = " or ".join(f"RESOLVER_{f.upper()}" for f in fields)
            yield Check(f"provider {provider}", "off", f"set {names} to turn it on")
    for section in settings.sections:
        for name, fix in section.problems():
            yield Check(name, "fail", fix)
    for item in registry.installed():
        setup = setup_of(item)
        if setup is not None and setup.config_checks is not None:
            yield from setup.config_checks(settings)


CHECKS: tuple[Callable[[Settings], Check], ...] = (
    _database,
    _redis,
    _docker,
    _sandbox_image,
    _sandbox_runtime,
    _egress,
    _llm,
    _admin,
    _sign_in,
    _proofs,
)


def run_checks(*, offline: bool = False) -> list[Check]:
    """Every check, in order; a settings error is itself the first failing check. The settings
    include those stored in the vault (`store.configured`, installed by the CLI)."""
    try:
        settings = get_settings()
    except ConfigError as error:
        return [Check("settings", "fail", str(error))]
    results = [Check("settings", "ok", "loaded")]
    results += [check(settings) for check in CHECKS]
    results += list(_providers(settings))
    results += provider_checks(settings, offline=offline)
    return results
