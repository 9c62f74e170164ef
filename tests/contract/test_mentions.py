"""Pure core: the mention matcher, timestamps and options, tested without a network."""

from __future__ import annotations

import json
import re

import pytest

from integrations.slack.routes import parse_options
from resolver.contract.inbound import (
    MalformedError,
    Policy,
    Sender,
    SignatureError,
    decode_object,
    ignored_sender,
)
from resolver.contract.mentions import mask_quoted_and_code, mentions
from resolver.contract.signatures import check_window, parse_timestamp


@pytest.mark.parametrize(
    ("text", "request_text"),
    [
        ("@resolver fix the bug", "fix the bug"),
        ("Hey @Resolver, please add tests", "please add tests"),
        ("@RESOLVER: go", "go"),
        ("(@resolver) look", "look"),
        ("@resolver[bot] rebase", "rebase"),
        ("@resolver", ""),
        (
            "first line\n> quoted\n@resolver do it\n```\ncode stays\n```",
            "do it\n```\ncode stays\n```",
        ),
        ("`@resolver` no, but @resolver yes", "yes"),
    ],
)
def test_mentions_and_the_request_after_them(text: str, request_text: str) -> None:
    assert mentions(text, "resolver") == request_text


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "no mention here",
        "mail me@resolver.dev",
        "@resolverbot",
        "@resolver-ci please",
        "@resolver_x",
        "`@resolver`",
        "``@resolver``",
        "```\n@resolver\n```",
        "~~~python\n@resolver\n~~~",
        "```\nnever closed @resolver",
        "> @resolver quoted",
        "  > @resolver indented quote",
        "<code>@resolver</code>",
        "<pre>\n@resolver\n</pre>",
        "<blockquote>@resolver</blockquote>",
        "{code:python}@resolver{code}",
        "{noformat}@resolver{noformat}",
        "{quote}@resolver{quote}",
        "bq. @resolver",
        "{{@resolver}}",
        "path/@resolver",
    ],
)
def test_no_mention(text: str | None) -> None:
    assert mentions(text, "resolver") is None


@pytest.mark.parametrize(
    ("text", "blanked"),
    [
        ("a `x` b ``y` z`` c", ["`x`", "``y` z``"]),
        ("``` tick `code` @bot", ["`code`"]),  # three ticks with no close are text
        ("x {{m}} y {{ z", ["{{m}}"]),
        ("<pre>p</pre> <code>q", ["<pre>p</pre>"]),
        ("<CODE>x</code > <pre>y", ["<CODE>x</code >"]),
        ("\\``@bot help`", ["`@bot help`"]),  # an escaped tick is text; the rest is a run
        ("\\```\n``@bot``", ["``\n``"]),
    ],
)
def test_code_and_quotes_are_masked_in_place(text: str, blanked: list[str]) -> None:
    masked = text
    for part in blanked:
        masked = masked.replace(part, re.sub(r"[^\n]", " ", part), 1)
    assert mask_quoted_and_code(text) == masked


@pytest.mark.parametrize(
    "filler",
    [
        "`" * 40_000,
        "{{" * 30_000,
        "<pre>" * 10_000,
        "`a" * 20_000,
        "\n" + "`" * 40_000,
        "{code:" * 10_000,
        "\\`" * 20_000,
    ],
)
def test_a_long_run_of_openings_without_a_close_is_read_once(filler: str) -> None:
    """Each opening without a close was scanned to the end once more: a comment of 40,000
    ticks held the web process for seconds. Now they are text, found in one pass."""
    assert mentions(f"@bot please {filler}", "bot") == f"please {filler}"


def test_handles_with_regex_characters_are_literal() -> None:
    assert mentions("@a.b please", "a.b") == "please"
    assert mentions("@axb please", "a.b") is None


@pytest.mark.parametrize(
    ("request_text", "task", "options"),
    [
        ("fix it repo=acme/web branch=fix-1", "fix it", {"repo": "acme/web", "branch": "fix-1"}),
        ("repo=group/sub/project fix it", "fix it", {"repo": "group/sub/project"}),
        ("repo=a/b repo=c/d go", "repo=c/d go", {"repo": "a/b"}),
        ("myrepo=a/b stays", "myrepo=a/b stays", {}),
        ("branch=../x stays", "branch=../x stays", {}),
    ],
)
def test_slack_inline_options(request_text: str, task: str, options: dict[str, str]) -> None:
    assert parse_options(request_text) == (task, options)


@pytest.mark.parametrize("value", ["1700000000", 1700000000, 1.7e9, " 1700000000 "])
def test_timestamps(value: object) -> None:
    assert parse_timestamp(value) == 1.7e9


@pytest.mark.parametrize("value", [None, True, "", "1e9", "-5", "12:00", float("inf"), [1], {}])
def test_bad_timestamps(value: object) -> None:
    with pytest.raises(SignatureError):
        parse_timestamp(value)


def test_window_is_inclusive_and_symmetric() -> None:
    check_window(1000.0, now=1300.0, window=300)
    check_window(1300.0, now=1000.0, window=300)
    with pytest.raises(SignatureError):
        check_window(1000.0, now=1300.5, window=300)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b"null",
        b"\xff",
        b'{"a": "\\u0000"}',
        b'{"a": "x\\\\\\u0000"}',
        b'{"a": "\\ud800"}',
        b"[" * 5000,
    ],
)
def test_bodies_that_are_not_storable_objects(body: bytes) -> None:
    with pytest.raises(MalformedError):
        decode_object(body)


@pytest.mark.parametrize("text", [r"the escape \u0000 in strings", r"\\\\u0000"])
def test_text_about_a_nul_escape_is_no_nul(text: str) -> None:
    """A request about the escape (a backslash written as text, escaped in the JSON) is kept."""
    body = json.dumps({"a": text}).encode()
    assert b"\\u0000" in body
    assert decode_object(body) == {"a": text}


def test_surrogate_pairs_are_fine() -> None:
    assert decode_object(b'{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


@pytest.mark.parametrize(
    ("sender", "reason"),
    [
        (Sender("1", "resolver"), "own"),
        (Sender("1", "Resolver[bot]", is_bot=True), "own"),
        (Sender("bot-account"), "own"),
        (Sender("2", "renovate[bot]", is_bot=True), "bot"),
        (Sender("3", "dependabot[bot]", is_bot=True), None),
        (Sender("4", "alice"), None),
    ],
)
def test_ignored_senders(sender: Sender, reason: str | None) -> None:
    policy = Policy("resolver", "resolver", frozenset({"dependabot"}), frozenset({"bot-account"}))
    assert ignored_sender(sender, policy) == reason
