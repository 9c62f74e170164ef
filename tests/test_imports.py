"""Import budgets: the web process starts without the agent, its model client or the sandbox.

import-linter's `web-stays-light` contract reads the source; this test asks a fresh interpreter
what importing `resolver.app` and the command line really loads, package `__init__` files
included.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from integrations import registry

# A finder that never finds anything, only notes which module's import first asked for each name.
NOTE = """
import contextlib, importlib, io, json, sys

class Note:
    def find_spec(self, name, path=None, target=None):
        frame, chain = sys._getframe(1), []
        while frame is not None:
            module = frame.f_globals.get("__name__")
            if frame.f_code.co_name == "<module>" and module not in chain:
                chain.append(module)
            frame = frame.f_back
        first.setdefault(name, " -> ".join(reversed(chain[:-1])))
        return None

first = {}
sys.meta_path.insert(0, Note())
"""
IMPORT = """
importlib.import_module(sys.argv[1])
print(json.dumps({name: first.get(name, "?") for name in sys.argv[2:] if name in sys.modules}))
"""
# `resolver ARGS`, run by its entry point; what it prints is left out, its exit code kept.
COMMAND = """
from resolver.cli import main
names, sys.argv = sys.argv[2:], ["resolver", *json.loads(sys.argv[1])]
code = 0
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit as exit:
        code = exit.code
loaded = {name: first.get(name, "?") for name in names if name in sys.modules}
print(json.dumps({"code": code, "loaded": loaded}))
"""

ROOT = Path(__file__).resolve().parents[1]
NOT_IN_WEB = ("litellm", "docker", "sandbox", "resolver.agent.controller", "resolver.agent")


def loaded(root: str, names: tuple[str, ...]) -> dict[str, str]:
    """Which of `names` importing `root` loads in a new interpreter, each with its import chain."""
    done = subprocess.run(
        [sys.executable, "-c", NOTE + IMPORT, root, *names],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: dict[str, str] = json.loads(done.stdout)
    return found


def ran(command: tuple[str, ...], names: tuple[str, ...]) -> dict[str, str]:
    """Which of `names` running `resolver COMMAND` loads in a new interpreter, each with its
    import chain; the command must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", NOTE + COMMAND, json.dumps(command), *names],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["code"] == 0, done.stderr
    loaded: dict[str, str] = found["loaded"]
    return loaded


# `resolver serve` is the command line's, then its command's module, then the app's.
@pytest.mark.parametrize("root", ["resolver.app", "resolver.cli.services"])
def test_the_web_process_loads_no_agent_model_client_or_sandbox(root: str) -> None:
    assert loaded(root, NOT_IN_WEB) == {}


# The callbacks worker shares the tasks module with the worker that runs jobs; only the job task
# loads what runs a job (`resolver.runners`), so posting a comment never waits on litellm.
NOT_IN_CALLBACKS = ("litellm", "resolver.agent.controller", "resolver.runners")


def test_the_callbacks_worker_loads_no_agent_loop_or_model_client() -> None:
    assert loaded("resolver.tasks", NOT_IN_CALLBACKS) == {}


def test_the_job_task_loads_the_agent_loop_when_a_job_runs() -> None:
    """The other side of the above: what the job task imports lazily does exist and loads."""
    assert set(loaded("resolver.runners", NOT_IN_CALLBACKS)) == set(NOT_IN_CALLBACKS)


@pytest.mark.parametrize("root", ["resolver.app", "resolver.cli.services"])
def test_the_web_process_loads_no_providers_reply_side(root: str) -> None:
    reply_sides = tuple(f"integrations.{name}.provider" for name in registry.names())
    assert len(reply_sides) > 1
    assert loaded(root, reply_sides) == {}


# The command line imports a command's module when that command runs or shows its help: its own
# start loads no command, no provider, and neither the store, the broker nor the settings.
COMMANDS = tuple(
    f"resolver.cli.{module.stem}"
    for module in sorted(ROOT.glob("resolver/cli/*.py"))
    if not module.stem.startswith("__")
)
PROVIDERS = ("integrations.registry", *(f"integrations.{name}" for name in registry.names()))


def test_the_command_line_starts_without_its_commands_providers_store_or_broker() -> None:
    assert len(COMMANDS) > 1
    assert ran(("--version",), (*COMMANDS, *PROVIDERS, "sqlalchemy", "celery", "pydantic")) == {}


def test_a_commands_help_loads_that_command_only() -> None:
    """`resolver jobs --help`: the jobs module and the unit of work it shares, no other command
    and no provider (the registry is imported when the settings are first read)."""
    found = ran(("jobs", "--help"), (*COMMANDS, *PROVIDERS))
    assert set(found) == {"resolver.cli.jobs", "resolver.cli.transaction"}


# The stand-in servers for tests sit beside their provider; no process of the service loads one.
STANDINS = tuple(
    ".".join(package.relative_to(ROOT).parts)
    for package in sorted(ROOT.glob("integrations/**/standin"))
    if (package / "__init__.py").is_file()
)


@pytest.mark.parametrize("root", ["resolver.app", "resolver.cli.services", "resolver.tasks"])
def test_no_process_of_the_service_loads_a_stand_in(root: str) -> None:
    assert len(STANDINS) > 1
    assert loaded(root, STANDINS) == {}


# Traces are off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then no process loads the tracing SDK,
# its exporter or an instrumentation. (redis-py loads the SDK's metrics part where the `tracing`
# extra is installed, as in the dev environment: that is redis's, not ours.)
TRACING = (
    "opentelemetry.sdk.trace",
    "opentelemetry.exporter.otlp.proto.http",
    "opentelemetry.instrumentation",
)


@pytest.mark.parametrize("root", ["resolver.app", "resolver.tasks"])
def test_a_process_without_an_otlp_endpoint_loads_no_tracing(root: str) -> None:
    assert loaded(root, TRACING) == {}


WARMED = """
import json, sys
from integrations import registry
registry.warm()
ENDINGS = (".rest.apps", ".rest.reactions", ".rest.issues", ".provider")
print(json.dumps(sorted(name for name in sys.modules if name.endswith(ENDINGS))))
"""


def test_a_callbacks_worker_loads_the_calls_of_a_first_acknowledgement_as_it_starts() -> None:
    """`registry.warm` (the callbacks worker's start): GitHub's reply side and the endpoints a
    new job's token, 👀 and status use, which githubkit loads on their first call, with no
    network call made."""
    done = subprocess.run(
        [sys.executable, "-c", WARMED], capture_output=True, text=True, timeout=120, check=True
    )
    warmed = json.loads(done.stdout)
    assert "integrations.github.provider" in warmed
    assert {name.rsplit(".", 1)[1] for name in warmed if ".rest." in name} == {
        "apps",
        "reactions",
        "issues",
    }
