"""Runs the main job end to end: a signed @mention → a job → the agent in a sandbox → a pushed
branch → a draft pull request and one status comment, edited in place.

Stand-ins, clearly labelled: a local GitHub (its REST API and a git server over HTTP, from
tests/support) and a scripted model unless RESOLVER_LLM_MODEL is set. Everything else is the
real service: the HTTP server, SQLite, Redis, a Celery worker, the Docker sandbox and git.
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
from typing import Any

import httpx
import redis

from demo.forge import INSTALLATION_ID, REPO, StandinGitHub, start_github
from demo.llm_standin import StandinLLM
from demo.repo import git
from integrations.github.standin.api import BOT_LOGIN

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


DEMO_REDIS = "redis://127.0.0.1:6379/14"
REQUEST = "@resolver the add() function is wrong, please fix it"


def webhook(github: StandinGitHub) -> bytes:
    """GitHub's recorded issue_comment.created payload, on the stand-in's repository."""
    payload = json.loads(FIXTURE.read_text())
    comment_id = github.api.add_comment(REPO, 1, REQUEST, "Codertocat")
    payload["comment"].update(id=comment_id, body=REQUEST)
    payload["issue"]["title"] = "add() subtracts instead of adding"
    payload["repository"].update(
        full_name=REPO, name="calc", clone_url=github.git.url_for(REPO), default_branch="main"
    )
    payload["installation"] = {"id": INSTALLATION_ID}
    return json.dumps(payload).encode()


def service_env(llm_url: str | None, github: StandinGitHub) -> dict[str, str]:
    env = {
        **os.environ,
        "RESOLVER_GITHUB_WEBHOOK_SECRET": secrets.token_hex(16),
        "RESOLVER_GITHUB_API_URL": github.api.base_url,
        "RESOLVER_GITHUB_APP_ID": "1001",
        "RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH": str(github.key_path),
        "RESOLVER_STATUS_INTERVAL": "2",
        # The demo's own database and Redis db, fresh each run: nothing left over from earlier.
        "RESOLVER_DATABASE_URL": f"sqlite:///{DEMO_DIR / 'resolver.db'}",
        "RESOLVER_REDIS_URL": DEMO_REDIS,
    }
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


def follow(env: dict[str, str], job_id: int, timeout: float = 300) -> dict[str, Any]:
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


def pull_request(env: dict[str, str], job_id: int, timeout: float = 60) -> dict[str, Any]:
    """Wait for the callbacks to open the pull request (or for the job to need none)."""
    deadline = time.monotonic() + timeout
    job = json.loads(cli(env, "jobs", "show", str(job_id), "--json"))
    while time.monotonic() < deadline and job["outcome"] == "changed_code" and not job["pr_url"]:
        time.sleep(0.5)
        job = json.loads(cli(env, "jobs", "show", str(job_id), "--json"))
    time.sleep(2)  # the last status edit follows the pull request
    return dict(job)


def main() -> int:
    DEMO_DIR.mkdir(parents=True, exist_ok=True)
    say("Resolver demo: one @mention, end to end, on this machine")
    github = start_github(DEMO_DIR)
    print(f"  [stand-in] GitHub API at {github.api.base_url} (App installation {INSTALLATION_ID})")
    print(f"  [stand-in] git server at {github.git.base_url}: repository {REPO}")
    real_model = os.environ.get("RESOLVER_LLM_MODEL")
    try:
        with StandinLLM() as llm:
            env = service_env(None if real_model else llm.base_url, github)
            print(
                f"  model: {real_model}"
                if real_model
                else f"  [stand-in] model: scripted OpenAI-compatible server at {llm.base_url}"
            )
            job_id, job = run_service(env, github)
    finally:
        github.close()
    return report(github, job_id, job)


SERVE_TRIES = 3
SERVE_TIMEOUT = 120.0
"""Seconds `resolver serve` may take to answer: a loaded host can take half a minute to import."""


def serve(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """`resolver serve`, answering on a free port, and its base URL. The port is free when
    picked, but something may take it before the server binds it: then the server exits, and
    another port is tried."""
    log = DEMO_DIR / "server.log"
    for _ in range(SERVE_TRIES):
        port = free_port()
        server = start(["serve", "--port", str(port)], env, log)
        base = f"http://127.0.0.1:{port}"
        if answers(f"{base}/healthz", server):
            return server, base
        if server.poll() is None:  # it did not answer in time
            stop(server)
    raise SystemExit(f"the server did not start; its log: {log}\n{log.read_text()[-2000:]}")


def answers(url: str, server: subprocess.Popen[bytes]) -> bool:
    """Whether `url` answers 200 before `server` exits or the time is up."""
    deadline = time.monotonic() + SERVE_TIMEOUT
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return server.poll() is None
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    return False


def run_service(env: dict[str, str], github: StandinGitHub) -> tuple[int, dict[str, Any]]:
    (DEMO_DIR / "resolver.db").unlink(missing_ok=True)
    redis.Redis.from_url(DEMO_REDIS).flushdb()
    cli(env, "db", "upgrade")
    cli(env, "users", "add", "demo")
    link = ["--provider", "github", "--external-id", "21031067", "--login", "Codertocat"]
    cli(env, "users", "link", "demo", *link)
    server, base = serve(env)
    worker = start(
        ["worker", "--concurrency", "2", "--hostname", "demo@%h"], env, DEMO_DIR / "worker.log"
    )
    try:
        say(f"1. Codertocat comments on {REPO}#1: '{REQUEST}'")
        job_id = int(str(send(base, env, webhook(github))["job_id"]))
        say(f"2. Job {job_id}: a worker runs the agent in a Docker sandbox (no network, no token)")
        follow(env, job_id)
        job = pull_request(env, job_id)
    finally:
        stop(worker)
        stop(server)
    return job_id, job


def report(github: StandinGitHub, job_id: int, job: dict[str, Any]) -> int:
    say("3. What Codertocat sees on GitHub [stand-in]")
    for comment in github.api.comments.values():
        if comment.login == BOT_LOGIN:
            edits = len(
                github.api.calls("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}")
            )
            print(f"  status comment by {BOT_LOGIN} (edited {edits} times in place):")
            print("    " + comment.body.replace("\n", "\n    "))
        elif comment.reactions:
            print(f"  reactions on the request: {[content for _, content in comment.reactions]}")
    print(f"  state={job['state']} outcome={job['outcome']} cost=${job['cost_usd'] or 0:.4f}")
    branch = job.get("branch")
    if branch:
        print(f"  branch {branch}:")
        print(git(github.bare, "diff", "main", str(branch)))
    for pull in github.api.pulls:
        print(
            f"  draft pull request #{pull.number}: {pull.title}\n    "
            + pull.body.replace("\n", "\n    ")
        )
    say(f"job {job_id}  PR {job.get('pr_url') or '-'}")
    return 0 if job["outcome"] == "changed_code" and job.get("pr_url") else 1


if __name__ == "__main__":
    sys.exit(main())
