"""The one classifier of failed provider calls: which answers pass with time, which need a
change first, and how each reads. The clients' own tests drive it through their stand-ins."""

from __future__ import annotations

import pytest

from resolver.contract.errors import HttpErrors, PermanentCallbackError, TransientCallbackError

ACME = HttpErrors("Acme", refused=" (the stored Acme token was refused)")


@pytest.mark.parametrize(
    ("status", "transient", "fate"),
    [
        (500, False, TransientCallbackError),
        (503, False, TransientCallbackError),
        (429, False, TransientCallbackError),
        (None, False, TransientCallbackError),  # the connection broke before a status
        (200, True, TransientCallbackError),  # the provider's own code says try again
        (403, True, TransientCallbackError),  # a rate limit in a 403 (GitHub's secondary)
        (400, False, PermanentCallbackError),
        (403, False, PermanentCallbackError),
        (404, False, PermanentCallbackError),
        (200, False, PermanentCallbackError),  # an error code inside a 200
    ],
)
def test_the_fate_follows_the_status_and_the_providers_word(
    status: int | None, transient: bool, fate: type[Exception]
) -> None:
    error = ACME.answered("POST /things", status, "Nope", retry_after=3.0, transient=transient)
    assert type(error) is fate
    assert str(error).startswith(f"Acme answered {status} to POST /things: Nope")


def test_a_transient_error_keeps_the_wait_and_a_permanent_one_has_none() -> None:
    slow = ACME.answered("GET /x", 503, "Down", retry_after=12.0)
    assert isinstance(slow, TransientCallbackError) and slow.retry_after == 12.0
    assert not hasattr(ACME.answered("GET /x", 404, "Gone", retry_after=12.0), "retry_after")


def test_a_refused_token_is_said_so_where_the_provider_asks() -> None:
    assert str(ACME.answered("GET /me", 401, "Unauthorized")).endswith("token was refused)")
    by_code = ACME.answered("GET /me", 200, "Who?", refused=True)
    assert str(by_code).endswith("token was refused)")
    assert (
        str(HttpErrors("Plain").answered("GET /me", 401, "No"))
        == "Plain answered 401 to GET /me: No"
    )


def test_an_error_inside_a_2xx_records_its_status_only_where_the_provider_asks() -> None:
    assert ACME.answered("q", 200, "Bad").status is None
    assert ACME.answered("q", 422, "Bad").status == 422
    chat = HttpErrors(
        "Chat",
        says="{vendor} answered {detail} to {action} (HTTP {status})",
        records_ok_status=True,
    )
    error = chat.answered("chat.post", 200, "channel_not_found")
    assert (str(error), error.status) == (
        "Chat answered channel_not_found to chat.post (HTTP 200)",
        200,
    )


def test_failures_before_an_answer_name_the_exception_class_only() -> None:
    secret = ConnectionError("https://user:s3cret@acme.example/api")
    unreachable = ACME.unreachable("GET /x", secret)
    assert isinstance(unreachable, TransientCallbackError)
    assert str(unreachable) == "Acme could not be reached for GET /x: ConnectionError"
    assert str(ACME.timed_out("GET /x")) == "Acme did not answer GET /x in time"
    bad_url = ACME.unusable_url("GET /x", ValueError("s3cret"))
    assert isinstance(bad_url, PermanentCallbackError)
    assert str(bad_url) == "the Acme API URL cannot be used for GET /x: ValueError"
    unreadable = ACME.unusable_answer("GET /x", ValueError("s3cret"))
    assert str(unreadable) == "Acme's answer to GET /x was unusable: ValueError"
    limited = ACME.rate_limited("GET /x", 403, 42.4)
    assert (str(limited), limited.retry_after) == (
        "Acme rate-limited GET /x (403); retry in 42s",
        42.4,
    )
