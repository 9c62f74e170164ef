"""The callback actions, each called as a worker calls it, against the Sixth test provider's
thread (a real `Conversation`: every post, edit and reaction is a line of its outbox) and a
small in-memory forge: the status message is posted once and then edited, a post whose answer
was lost is found again by its tag, a notice is sent once, and a pull request is opened once.
A stored row of the older shape (no `kind`, no `v`) is still sent; one whose payload does not
read fails, naming the field, and the next callback is sent as ever."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from prometheus_client import REGISTRY

from integrations import registry
from resolver.callbacks import actions
from resolver.callbacks.send import send
from resolver.contract import outbound as providers
from resolver.contract.callbacks import (
    CallbackPayload,
    CallbackResult,
    NoticePost,
    PullToOpen,
    PullToUpdate,
    Reaction,
    Reply,
    Sending,
    StatusUpdate,
    ThreadReply,
)
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.notices import PRIVATE
from resolver.contract.review import DiffComment, ReviewPost
from resolver.contract.triggers import read_trigger
from resolver.core.settings import Settings, get_settings
from resolver.features.review_requests.callbacks import record_review
from resolver.features.review_requests.contract import RESULT_KEY, ReviewResult
from resolver.store import jobs
from resolver.store.callbacks import record_callback
from resolver.store.db import session_scope
from resolver.store.models import Callback, Notice
from tests.conftest import ResolverEnv
from tests.integrations.sixth.provider import NAME, PROVIDER
from tests.integrations.sixth.provider.conversation import OUTBOX_ENV, records

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

THREAD = {"channel": "C0DEV", "thread": "1700000000.0001", "message_id": "M1"}
REPO = "octo/widgets"
BRANCH = "resolver/fix-7"


@dataclass
class Forge:
    """The pull-request side of a forge, in memory: what the actions ask of it."""

    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)

    def find_open_pull(self, repo: str, branch: str) -> providers.PullInfo | None:
        for number, pull in self.pulls.items():
            if (pull["repo"], pull["head"]) == (repo, branch):
                return providers.PullInfo(number, pull["url"], branch, pull["base"])
        return None

    def open_draft_pull(
        self, repo: str, branch: str, base: str, title: str, body: str
    ) -> providers.PullInfo:
        number = 100 + len(self.pulls)
        url = f"https://forge.test/{repo}/pull/{number}"
        values = {"repo": repo, "head": branch, "base": base, "title": title, "body": body}
        self.pulls[number] = {**values, "url": url}
        return providers.PullInfo(number, url, branch, base)

    def edit_pull_body(self, repo: str, number: int, body: str) -> None:
        self.pulls[number]["body"] = body


@dataclass
class Installed:
    outbox: Path
    forge: Forge
    private: list[tuple[str, str]]
    resolved: list[dict[str, Any]]
    reviews: list[ReviewPost] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)

    def lines(self, op: str | None = None) -> list[dict[str, Any]]:
        return [r for r in records(self.outbox) if op is None or r["op"] == op]


@pytest.fixture
def sixth(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Installed:
    """Sixth installed as its registry line would install it, here with a forge, private
    posts and thread resolution of its own, so each action has a port to act through."""
    outbox = tmp_path / "sixth-outbox.jsonl"
    monkeypatch.setenv(OUTBOX_ENV, str(outbox))
    installed = Installed(outbox, Forge(), [], [])

    def post_private(context: Any, to: str, text: str, settings: Any) -> None:
        if "private" in installed.refuse:
            raise PermanentCallbackError(installed.refuse["private"], status=403)
        installed.private.append((to, text))

    def resolve_thread(context: Any, requester_id: int | None, where: Any, settings: Any) -> None:
        if "resolve" in installed.refuse:
            raise PermanentCallbackError(installed.refuse["resolve"], status=403)
        installed.resolved.append(dict(where))

    def post_review(
        context: Any, requester_id: int | None, review: ReviewPost, settings: Any
    ) -> Any:
        installed.reviews.append(review)
        return {"id": f"R{len(installed.reviews)}"}

    provider = replace(
        PROVIDER,
        post_review=post_review,
        forge=lambda context, requester_id, settings: installed.forge,  # type: ignore[arg-type,return-value]
        post_private=post_private,
        resolve_thread=resolve_thread,
    )
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, provider))
    return installed


P = TypeVar("P", bound=CallbackPayload)


def act(
    action: Callable[[Session, Sending[P], Settings], CallbackResult],
    payload: P,
    callback_id: int = 0,
) -> CallbackResult:
    """An action as `callbacks.send` calls it: in the try's session, with its typed payload."""
    with session_scope() as session:
        return action(session, Sending(callback_id, NAME, payload), get_settings())


def new_job(task: str = "fix the flaky test", **trigger: Any) -> int:
    with session_scope() as session:
        job = jobs.create_job(
            session, jobs.NewJob(source=NAME, task=task, trigger={**THREAD, **trigger})
        )
        return job.id


def new_callback(payload: CallbackPayload, job: int | None = None) -> int:
    with session_scope() as session:
        return record_callback(session, NAME, payload, job).id


def set_job(job_id: int, **values: Any) -> None:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        for key, value in values.items():
            setattr(job, key, value)


def status_ref(job_id: int) -> dict[str, Any]:
    with session_scope() as session:
        return dict(jobs.get_job(session, job_id).status_ref or {})


# The status message.


def test_the_first_status_is_posted_with_its_tag_and_a_later_one_edits_it(
    sixth: Installed,
) -> None:
    job_id = new_job()
    first = act(actions.send_status, StatusUpdate(job_id=job_id))
    [post] = sixth.lines("post")
    assert post["tag"] == f"status-{job_id}"
    assert first == CallbackResult(
        message={"channel": post["channel"], "thread": post["thread"], "id": post["id"]}
    )

    set_job(job_id, result={"summary": "Found the race in the fixture."}, state="succeeded")
    assert act(actions.send_status, StatusUpdate(job_id=job_id)) == first
    [edit] = sixth.lines("edit")
    assert edit["id"] == post["id"] and edit["text"] != post["text"]
    assert len(sixth.lines("post")) == 1


def test_a_status_that_would_read_the_same_is_not_sent_again(sixth: Installed) -> None:
    job_id = new_job()
    act(actions.send_status, StatusUpdate(job_id=job_id))
    assert act(actions.send_status, StatusUpdate(job_id=job_id)) == CallbackResult(unchanged=True)
    assert [r["op"] for r in sixth.lines()] == ["post"]


def test_a_status_post_whose_answer_was_lost_is_found_by_its_tag_and_edited(
    sixth: Installed,
) -> None:
    job_id = new_job()
    act(actions.send_status, StatusUpdate(job_id=job_id))
    [post] = sixth.lines("post")
    # The worker died after posting and before recording it: only "posting" is on the row.
    set_job(job_id, status_ref={"posting": post["at"]}, result={"summary": "Halfway."})
    found = act(actions.send_status, StatusUpdate(job_id=job_id))
    assert found.message is not None and found.message["id"] == post["id"]
    assert len(sixth.lines("post")) == 1 and len(sixth.lines("edit")) == 1
    assert status_ref(job_id)["message"]["id"] == post["id"]


def test_a_sent_status_retires_the_older_pending_status_updates(sixth: Installed) -> None:
    job_id = new_job()
    older = new_callback(StatusUpdate(job_id=job_id), job_id)
    newest = new_callback(StatusUpdate(job_id=job_id), job_id)
    act(actions.send_status, StatusUpdate(job_id=job_id), newest)
    with session_scope() as session:
        states = {cb.id: cb.state for cb in session.query(Callback).filter_by(job_id=job_id)}
    assert states == {older: "superseded", newest: "pending"}


# Replies, reactions and notices.


def test_the_eyes_go_on_the_trigger_message(sixth: Installed) -> None:
    act(actions.send_react, Reaction(job_id=new_job()))
    assert sixth.lines() == [{"op": "react", "id": "M1", "emoji": "eyes"}]


def test_a_reply_retried_after_its_answer_was_lost_is_not_posted_twice(
    sixth: Installed,
) -> None:
    job_id = new_job()
    payload = Reply(job_id=job_id, text="Queued behind job 3.")
    callback_id = new_callback(payload, job_id)
    first = act(actions.send_reply, payload, callback_id)
    again = act(actions.send_reply, payload, callback_id)
    [post] = sixth.lines("post")
    assert (post["text"], post["tag"]) == ("Queued behind job 3.", f"reply-{callback_id}")
    assert first == again


def test_the_posting_mark_is_kept_when_the_post_fails(
    sixth: Installed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark is committed in its own transaction before the post: a try that fails while
    posting leaves it, so the next try looks for a post it may have made."""
    job_id = new_job()
    payload = Reply(job_id=job_id, text="Queued behind job 3.")
    callback_id = new_callback(payload, job_id)
    monkeypatch.delenv(OUTBOX_ENV)  # Sixth's API refuses the post
    with pytest.raises(PermanentCallbackError):
        act(actions.send_reply, payload, callback_id)
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        assert callback is not None and "posting" in (callback.result or {})


def new_notice(context: dict[str, Any], body: str = "Link your account first.") -> int:
    with session_scope() as session:
        notice = Notice(
            provider=NAME,
            kind="unlinked",
            dedup_key="U1:unlinked",
            conversation_key="sixth:C0DEV",
            body=body,
            context={**THREAD, **context},
        )
        session.add(notice)
        session.flush()
        return notice.id


def send_notice(notice_id: int) -> CallbackResult:
    payload = NoticePost(notice_id=notice_id)
    return act(actions.send_notice, payload, new_callback(payload))


def notice_row(notice_id: int) -> Notice:
    with session_scope() as session:
        notice = session.get(Notice, notice_id)
        assert notice is not None
        session.expunge(notice)
        return notice


def test_a_notice_is_posted_once_and_marked_sent(sixth: Installed) -> None:
    notice_id = new_notice({})
    send_notice(notice_id)
    assert send_notice(notice_id) == CallbackResult(skipped=True)
    assert [r["text"] for r in sixth.lines("post")] == ["Link your account first."]
    assert notice_row(notice_id).sent_at is not None


def test_a_notices_private_link_goes_only_to_its_recipient_and_is_then_forgotten(
    sixth: Installed,
) -> None:
    private = {"to": "U1", "text": "Your link: https://resolver.test/link/abc"}
    notice_id = new_notice({PRIVATE: private})
    send_notice(notice_id)
    assert sixth.private == [("U1", "Your link: https://resolver.test/link/abc")]
    assert [r["text"] for r in sixth.lines("post")] == ["Link your account first."]
    assert PRIVATE not in notice_row(notice_id).context


def test_a_refused_private_link_is_posted_publicly_as_its_fallback(sixth: Installed) -> None:
    sixth.refuse["private"] = "ephemeral messages are off"
    private = {"to": "U1", "text": "secret link", "fallback": "Link here: https://resolver.test/l"}
    notice_id = new_notice({PRIVATE: private})
    send_notice(notice_id)
    assert sixth.private == []
    assert [r["text"] for r in sixth.lines("post")] == ["Link here: https://resolver.test/l"]
    notice = notice_row(notice_id)
    assert notice.body == "Link here: https://resolver.test/l"
    assert PRIVATE not in notice.context


# The pull request.


def forge_job(**trigger: Any) -> int:
    job_id = new_job(forge={"provider": NAME, "repo": REPO, "base": "main"}, **trigger)
    set_job(job_id, branch=BRANCH, state="succeeded", result={"summary": "Fixed the race."})
    return job_id


def test_a_draft_pull_request_is_opened_once_and_its_number_recorded(sixth: Installed) -> None:
    job_id = forge_job(title="Flaky test in CI")
    opened = act(actions.send_open_pull, PullToOpen(job_id=job_id))
    again = act(actions.send_open_pull, PullToOpen(job_id=job_id))
    assert opened == again == CallbackResult(url=f"https://forge.test/{REPO}/pull/100", number=100)
    [pull] = sixth.forge.pulls.values()
    assert (pull["head"], pull["base"], pull["title"]) == (BRANCH, "main", "Flaky test in CI")
    assert "Fixed the race." in pull["body"]
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        assert job.pr_url == opened.url
        assert (job.result["pull_pending"], job.result["pull_number"]) == (False, 100)


def test_a_follow_up_rewrites_the_open_pull_requests_description(sixth: Installed) -> None:
    job_id = forge_job()
    act(actions.send_open_pull, PullToOpen(job_id=job_id))
    set_job(job_id, result={"summary": "Also fixed the second race."})
    assert act(actions.send_update_pull, PullToUpdate(job_id=job_id)).number == 100
    assert "Also fixed the second race." in sixth.forge.pulls[100]["body"]


def test_a_follow_up_whose_pull_request_is_closed_changes_nothing(sixth: Installed) -> None:
    assert act(actions.send_update_pull, PullToUpdate(job_id=forge_job())).skipped
    assert sixth.forge.pulls == {}


@pytest.mark.parametrize(
    ("title", "task", "expected"),
    [
        ("  Flaky test  ", "ignored", "Flaky test"),
        ("", "fix the parser\nand its tests", "fix the parser"),
        (None, "   ", "Resolver change"),
        ("x" * 300, "t", "x" * 200),
    ],
)
def test_a_pull_requests_title_is_the_triggers_or_the_tasks_first_line(
    title: str | None, task: str, expected: str
) -> None:
    assert actions.pull_title(read_trigger({"title": title}), task) == expected


# Replies in review threads.


def thread_reply(job_id: int, resolve: bool) -> CallbackResult:
    where: dict[str, Any] = {"thread": "1700000000.0042"}
    payload = ThreadReply(job_id=job_id, where=where, text="Done.", resolve=resolve)
    return act(actions.send_thread_reply, payload, new_callback(payload, job_id))


def test_a_thread_reply_goes_into_that_thread_and_resolves_it_when_asked(
    sixth: Installed,
) -> None:
    done = thread_reply(new_job(), resolve=True)
    [post] = sixth.lines("post")
    assert (post["thread"], post["text"]) == ("1700000000.0042", "Done.")
    assert done.resolved is True
    assert sixth.resolved == [{"thread": "1700000000.0042"}]


def test_a_thread_reply_not_asked_to_resolve_leaves_the_thread_open(sixth: Installed) -> None:
    assert thread_reply(new_job(), resolve=False).resolved is False
    assert sixth.resolved == []


def test_a_refused_resolution_keeps_the_reply_and_says_why(sixth: Installed) -> None:
    sixth.refuse["resolve"] = "Resource not accessible by integration"
    with pytest.raises(PermanentCallbackError) as refused:
        thread_reply(new_job(), resolve=True)
    assert str(refused.value) == (
        "replied in the thread, but could not resolve it: Resource not accessible by integration"
    )
    assert refused.value.status == 403
    assert len(sixth.lines("post")) == 1


# Stored rows, as `callbacks.send` reads them.


def stored_row(action: str, payload: object, job_id: int | None) -> int:
    """A callback row as the release before typed payloads wrote it (no `kind`, no `v`): a
    row left from before the upgrade, or one a worker of that release records during a rolling
    deploy."""
    with session_scope() as session:
        row = Callback(provider=NAME, action=action, payload=payload, job_id=job_id)
        session.add(row)
        session.flush()
        return row.id


def sent_row(callback_id: int) -> tuple[str, str | None, list[tuple[str, int | None]]]:
    with session_scope() as session:
        row = session.get_one(Callback, callback_id)
        return row.state, row.error, [(a.outcome, a.status) for a in row.attempts]


def failed_count(action: str) -> float:
    """Callbacks of `action` that failed for good, as /metrics reports them."""
    value = REGISTRY.get_sample_value("resolver_callbacks_failed_total", {"action": action})
    return value or 0.0


def test_a_reply_stored_in_the_older_shape_is_sent(sixth: Installed) -> None:
    job_id = new_job()
    callback_id = stored_row(actions.REPLY, {"job_id": job_id, "text": "Queued."}, job_id)
    assert send(callback_id, get_settings()) is None
    [post] = sixth.lines("post")
    assert (post["text"], post["tag"]) == ("Queued.", f"reply-{callback_id}")
    assert sent_row(callback_id) == ("sent", None, [("ok", None)])


def test_an_older_status_row_retires_the_pending_ones_before_it(sixth: Installed) -> None:
    """Its payload held its own id (`callback_id`): the row's id is what counts."""
    job_id = new_job()
    older = stored_row(actions.STATUS, {"job_id": job_id, "callback_id": 0}, job_id)
    newest = stored_row(actions.STATUS, {"job_id": job_id, "callback_id": 0}, job_id)
    send(newest, get_settings())
    assert sent_row(older)[0] == "superseded" and sent_row(newest)[0] == "sent"


def test_a_stored_payload_that_does_not_read_fails_its_callback_saying_why(
    sixth: Installed,
) -> None:
    job_id = new_job()
    bad = stored_row(actions.STATUS, {"text": "done"}, job_id)
    worse = stored_row(actions.REPLY, "not an object", job_id)
    react = stored_row(actions.REACT, {"job_id": job_id}, job_id)
    failed_before = failed_count(actions.STATUS), failed_count(actions.REPLY)
    assert send(bad, get_settings()) is None
    assert send(worse, get_settings()) is None
    assert (failed_count(actions.STATUS), failed_count(actions.REPLY)) == (
        failed_before[0] + 1,
        failed_before[1] + 1,
    )
    assert sent_row(bad) == (
        "failed",
        "a status callback's payload does not read: job_id: Field required",
        [("permanent", None)],
    )
    assert sent_row(worse)[:2] == ("failed", "a reply callback's payload is not an object")
    assert send(react, get_settings()) is None  # the next callback is sent as ever
    assert sixth.lines() == [{"op": "react", "id": "M1", "emoji": "eyes"}]


def test_a_pending_row_whose_result_does_not_read_fails_its_callback_saying_why(
    sixth: Installed,
) -> None:
    """Its posting mark is no time: nothing is posted (it might be a second post)."""
    job_id = new_job()
    callback_id = stored_row(actions.REPLY, {"job_id": job_id, "text": "Queued."}, job_id)
    with session_scope() as session:
        session.get_one(Callback, callback_id).result = {"posting": "an hour ago"}
    assert send(callback_id, get_settings()) is None
    state, error, tries = sent_row(callback_id)
    assert (state, tries) == ("failed", [("permanent", None)])
    assert error is not None and error.startswith(
        "a callback's result does not read: posting: Input should be a valid datetime"
    )
    assert sixth.lines("post") == []


def test_the_status_of_a_job_whose_result_does_not_read_fails_saying_why(
    sixth: Installed,
) -> None:
    job_id = new_job()
    set_job(job_id, result={"summary": ["the model's words"], "pull_pending": "maybe"})
    callback_id = new_callback(StatusUpdate(job_id=job_id), job_id)
    assert send(callback_id, get_settings()) is None
    state, error, tries = sent_row(callback_id)
    assert (state, tries) == ("failed", [("permanent", None)])
    assert error is not None and error.startswith(
        "a job's result does not read: summary: Input should be a valid string; pull_pending:"
    )
    assert "model's words" not in error and "maybe" not in error
    assert sixth.lines("post") == []


def test_a_notice_whose_context_does_not_read_fails_its_callback_saying_why(
    sixth: Installed,
) -> None:
    """Its private part lost its text: nothing is posted, the field is named, the link is not."""
    notice_id = new_notice({PRIVATE: {"to": "U1", "link": "https://resolver.test/link/abc"}})
    callback_id = new_callback(NoticePost(notice_id=notice_id))
    assert send(callback_id, get_settings()) is None
    state, error, tries = sent_row(callback_id)
    assert (state, tries) == ("failed", [("permanent", None)])
    assert (
        error
        == f"notice {notice_id}: a notice's context does not read: private.text: Field required"
    )
    assert sixth.private == [] and sixth.lines("post") == []
    assert notice_row(notice_id).sent_at is None


def test_a_review_jobs_review_is_recorded_and_posted_with_its_tag(sixth: Installed) -> None:
    comment = DiffComment("src/app.py", 12, "RIGHT", "Can be <b>None</b>.", suggestion="x = 1")
    review = ReviewResult("Two things.", "request_changes", (comment,), "h", "b", "s")
    job_id = new_job()
    set_job(job_id, state="succeeded", result={RESULT_KEY: review.as_dict()})
    with session_scope() as session:
        [callback_id] = record_review(session, jobs.get_job(session, job_id), set())
    assert send(callback_id, get_settings()) is None
    assert sent_row(callback_id) == ("sent", None, [("ok", None)])
    [posted] = sixth.reviews
    assert (posted.summary, posted.verdict, posted.tag) == (
        "Two things.",
        "request_changes",
        f"review-{callback_id}",
    )
    # The model's words sanitised when recorded; the suggestion (code) as written.
    assert posted.comments == (replace(comment, body="Can be None."),)
