"""Runs the main job end to end: a signed @mention → a job → the agent in a sandbox → a branch.

Stand-ins, clearly labelled: a local bare repository for the forge's repository, and a scripted
model unless RESOLVER_LLM_MODEL is set. Everything else is the real service: the HTTP server,
SQLite, Redis, a Celery worker, the Docker sandbox and git.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from demo.llm_standin import StandinLLM
from demo.repo import git, make_remote

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "integrations/github/fixtures/issue_comment.created__on_issue.json"
DEMO_DIR = Path(os.environ.get("RESOLVER_DEMO_DIR", ROOT / "var/demo"))


def say(text: str) -> None:
    print(f"\n\033[1m{text}\033[0m", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "resolver.cli", *args],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "resolver.cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def webhook(remote: Path) -> bytes:
    """GitHub's recorded issue_comment.created payload, pointed at the local remote."""
    payload = json.loads(FIXTURE.read_text())
    payload["comment"]["body"] = "@resolver the add() function is wrong, please fix it"
    payload["issue"]["title"] = "add() subtracts instead of adding"
    payload["repository"]["clone_url"] = str(remote)
    return json.dumps(payload).encode()


def service_env(llm_url: str | None) -> dict[str, str]:
    env = {**os.environ, "RESOLVER_GITHUB_WEBHOOK_SECRET": secrets.token_hex(16)}
    if llm_url:
        env.update(
            RESOLVER_LLM_MODEL="openai/demo-standin",
            RESOLVER_LLM_BASE_URL=llm_url,
            RESOLVER_LLM_API_KEY="demo-standin-key",
            RESOLVER_LLM_INPUT_COST_PER_TOKEN="0.000003",
            RESOLVER_LLM_OUTPUT_COST_PER_TOKEN="0.000015",
        )
    return env


def send(base: str, env: dict[str, str], body: bytes) -> dict[str, object]:
    secret = env["RESOLVER_GITHUB_WEBHOOK_SECRET"].encode()
    headers = {
        "X-GitHub-Event": "issue_comment",
        "X-GitHub-Delivery": secrets.token_hex(16),
        "X-GitHub-Hook-ID": "1",
        "X-Hub-Signature-256": "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest(),
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/demo",
    }
    reply = httpx.post(f"{base}/webhooks/github", content=body, headers=headers, timeout=10)
    print(
        f"  POST /webhooks/github (issue_comment.created, signed)"
        f" -> {reply.status_code} {reply.text}"
    )
    reply.raise_for_status()
    return dict(reply.json())


def follow(env: dict[str, str], job_id: int, timeout: float = 300) -> dict[str, object]:
    """Print the job's trajectory as it grows; return the finished job."""
    seen = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = json.loads(cli(env, "jobs", "show", str(job_id), "--json"))
        for event in job["trajectory"][seen:]:
            detail = {k: v for k, v in event.items() if k not in ("seq", "kind", "at")}
            print(f"  #{event['seq']:<3} {event['kind']:<12} {json.dumps(detail)[:150]}")
        seen = len(job["trajectory"])
        if job["finished_at"]:
            return dict(job)
        time.sleep(0.5)
    raise SystemExit(f"job {job_id} did not finish in {timeout:.0f}s")


def main() -> int:
    DEMO_DIR.mkdir(parents=True, exist_ok=True)
    say("Resolver demo: one @mention, end to end, on this machine")
    remote = make_remote(DEMO_DIR)
    print(f"  [stand-in] forge repository: local bare git repo {remote}")
    real_model = os.environ.get("RESOLVER_LLM_MODEL")
    with StandinLLM() as llm:
        env = service_env(None if real_model else llm.base_url)
        print(
            f"  model: {real_model}"
            if real_model
            else f"  [stand-in] model: scripted OpenAI-compatible server at {llm.base_url}"
        )
        cli(env, "users", "add", "demo")
        cli(
            env,
            "users",
            "link",
            "demo",
            "--provider",
            "github",
            "--external-id",
            "21031067",
            "--login",
            "Codertocat",
        )
        port = free_port()
        server = start(["serve", "--port", str(port)], env, DEMO_DIR / "server.log")
        worker = start(
            ["worker", "--concurrency", "1", "--hostname", "demo@%h"], env, DEMO_DIR / "worker.log"
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            say("1. Codertocat comments '@resolver the add() function is wrong, please fix it'")
            job_id = int(str(send(base, env, webhook(remote))["job_id"]))
            say(
                f"2. Job {job_id}: a worker runs the agent in a Docker sandbox"
                " (no network, no secrets)"
            )
            job = follow(env, job_id)
        finally:
            stop(worker)
            stop(server)
    say("3. Result")
    print(f"  state={job['state']} outcome={job['outcome']} cost=${job['cost_usd'] or 0:.4f}")
    branch = job.get("branch")
    if branch:
        print(f"  branch {branch} pushed to {remote}:")
        print(git(remote, "diff", "main", str(branch)))
    print("  Posting the draft pull request and status comment back to the forge is not built yet")
    print("  (the end-to-end issue); the branch above is what that pull request will carry.")
    say(f"job {job_id}  branch {branch or '-'}  PR: not opened yet (no forge callbacks)")
    return 0 if job["outcome"] == "changed_code" else 1


if __name__ == "__main__":
    sys.exit(main())
