"""The one status message of a job: what it says at each point of the job's life. Pure.

The text is in the Markdown subset every conversation converts (bold, links, inline code,
lists). It is rendered from the job row each time, so an edit that arrives late or twice
still shows the newest state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from resolver.callbacks.proof import render_files, render_verification, render_verified_short
from resolver.contract.outbound import MAX_BODY, fit_body
from resolver.contract.verification import Verification
from resolver.core.job import QueuePlace
from resolver.core.states import JobState, Outcome

MAX_SUMMARY: Final = 3000


@dataclass(frozen=True)
class JobView:
    """What the status message shows about a job."""

    id: int
    state: str
    outcome: str | None
    repo: str | None
    steps: int
    cost_usd: float | None
    started_at: datetime | None
    finished_at: datetime | None
    now: datetime
    job_url: str
    summary: str = ""
    error: str | None = None
    pr_url: str | None = None
    branch: str | None = None
    pr_pending: bool = False
    updated_pull: bool = False
    max_steps: int | None = None
    pull_word: str = "pull request"
    pull_error: str | None = None
    notes: tuple[str, ...] = ()
    """What the host did with the agent's work that the requester should know."""
    place: QueuePlace | None = None
    """A queued job's place: the jobs that must finish first, under which cap."""
    stopped_by: str | None = None
    """Who asked the job to stop (a running job stops at its next step)."""
    verification: Verification | None = None
    """The checks the agent's trajectory shows (None before the agent has run)."""
    files: tuple[tuple[object, ...], ...] = ()
    """The branch's changed files (path, added, removed), at most MAX_FILES_LISTED of them."""
    files_total: int = 0
    model: str | None = None
    """The LLM model the agent ran with."""
    steering: int | None = None
    """The running job this request was sent to, while it waits there (steering)."""
    steered: int | None = None
    """The running job that took this request as a steering message."""


def elapsed(view: JobView) -> str:
    if view.started_at is None:
        return ""
    end = view.finished_at or view.now
    seconds = max(0, int((end - view.started_at).total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s"


def money(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.2f}"


def render(view: JobView) -> str:
    """The status message for the job as it is now."""
    headline, body = _headline(view), _body(view)
    facts = [
        part
        for part in (elapsed(view), _cost(view), _model(view), f"[job {view.id}]({view.job_url})")
        if part
    ]
    lines = [headline, "", " · ".join(facts)]
    if body:
        lines += ["", body]
    return "\n".join(lines).rstrip()


def _cost(view: JobView) -> str:
    if view.started_at is None:
        return ""
    return money(view.cost_usd)


def _model(view: JobView) -> str:
    return f"model `{view.model}`" if view.model else ""


def _where(view: JobView) -> str:
    return f" on `{view.repo}`" if view.repo else ""


def _headline(view: JobView) -> str:
    state = view.state
    if state == JobState.QUEUED and view.steering is not None:
        return (
            f"💬 **Added to the running job {view.steering}**: it reads this message at its "
            "next step."
        )
    if state == JobState.QUEUED:
        place = view.place
        if place is not None and place.behind > 0:
            jobs = "job" if place.behind == 1 else "jobs"
            return (
                f"⏳ **Queued**{_where(view)} behind {'at least ' if place.at_least else ''}"
                f"{place.behind} {jobs}: at most "
                f"{place.limit} run at once per {place.limit_name}. It starts by itself; "
                "nothing is dropped."
            )
        return f"⏳ **Queued**{_where(view)}: I will start as soon as a worker is free."
    if state == JobState.RUNNING:
        if view.stopped_by:
            return f"⏹️ **Stopping**{_where(view)}: {view.stopped_by} asked me to stop."
        if view.steps == 0:
            return f"👀 **Setting up**{_where(view)}: cloning and preparing the repository."
        limit = f" of at most {view.max_steps}" if view.max_steps else ""
        return f"🛠️ **Working**{_where(view)}: step {view.steps}{limit}."
    if state == JobState.CANCELLED:
        by = f" by {view.stopped_by}" if view.stopped_by else ""
        return f"🛑 **Cancelled**{by}. Nothing more will be pushed for this request."
    if state == JobState.SUCCEEDED:
        return _succeeded(view)
    return _failed(view)


def _succeeded(view: JobView) -> str:
    outcome = view.outcome
    done = f"✅ **Done**{_where(view)}."
    if outcome == Outcome.CHANGED_CODE:
        if view.pr_url:
            verb = "Updated" if view.updated_pull else "Opened"
            return f"{done} {verb} the draft {view.pull_word} {view.pr_url}"
        if view.pr_pending:
            return f"{done} Pushed `{view.branch}`; opening the {view.pull_word}…"
        if view.pull_error:
            return (
                f"{done} Pushed `{view.branch}`, but the draft {view.pull_word} could not be "
                f"opened: {view.pull_error}"
            )
        return f"{done} Pushed `{view.branch}`."
    if outcome == Outcome.ANSWERED and view.steered is not None:
        return f"💬 **Added to the running job {view.steered}**, which has read it."
    if outcome == Outcome.ANSWERED:
        return f"✅ **Answered**{_where(view)}. No code change was needed."
    return f"{done} Nothing needed changing, so no branch was pushed."


def _failed(view: JobView) -> str:
    outcome = view.outcome
    if outcome == Outcome.EXPIRED:
        return "⌛ **Expired.**"
    if outcome == Outcome.REFUSED:
        return f"🙅 **Not started.** {view.error or ''}".rstrip()
    if outcome == Outcome.COULD_NOT and view.steps == 0:
        return "❓ **I need more to go on.**"
    if outcome == Outcome.COULD_NOT:
        return "⚠️ **I could not finish this.**"
    return "❌ **Failed.**"


def _body(view: JobView) -> str:
    notes = "\n".join(f"- {note}" for note in view.notes)
    parts = [_main_body(view), _verified(view), notes]
    return "\n\n".join(part for part in parts if part).strip()


def _verified(view: JobView) -> str:
    """The short Verification line, on a finished job that changed code or ran any check."""
    verification = view.verification
    if verification is None or view.state not in (JobState.SUCCEEDED, JobState.FAILED):
        return ""
    if view.outcome == Outcome.CHANGED_CODE or verification.checks:
        return render_verified_short(verification)
    return ""


def _main_body(view: JobView) -> str:
    if view.state == JobState.FAILED and view.outcome == Outcome.COULD_NOT and view.steps == 0:
        return (view.error or "").strip()[:MAX_SUMMARY]  # a question back: no retry advice
    if view.state == JobState.FAILED and view.outcome != Outcome.REFUSED:
        reason = (view.error or "no reason was recorded").strip()[:MAX_SUMMARY]
        advice = (
            "You can mention me again with more detail, or press **Run again** on "
            f"[the job's page]({view.job_url})."
        )
        pushed = f"\n\nThe work so far is on `{view.branch}`." if view.branch else ""
        return f"{reason}{pushed}\n\n{advice}"
    if view.state == JobState.SUCCEEDED and view.summary:
        return view.summary.strip()[:MAX_SUMMARY]
    return ""


def pull_body(view: JobView, title: str, fixes: int | None) -> str:
    """The pull request's description: the summary, `Fixes #N`, the branch's files, the
    Verification block, the job and its cost. A follow-up on the branch writes it afresh."""
    lines = [view.summary.strip()[:MAX_SUMMARY] or title, ""]
    if fixes is not None:
        lines += [f"Fixes #{fixes}", ""]
    if view.notes:  # what the host did with the work, and the hosts the sandbox was refused
        lines += [*(f"- {note}" for note in view.notes), ""]
    files = render_files(view.files, view.files_total)
    if files:
        lines += [files, ""]
    if view.verification is not None:
        lines += [render_verification(view.verification), ""]
    verb = "Updated" if view.updated_pull else "Opened"
    signed = f"{verb} by Resolver for [job {view.id}]({view.job_url}) · {money(view.cost_usd)}"
    if view.model:
        signed += f" · {_model(view)}"
    # Cut before the job's line, which always shows: a forge refuses a description too long.
    return fit_body("\n".join(lines), MAX_BODY - len(signed) - 1) + "\n" + signed
