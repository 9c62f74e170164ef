"""A secret is masked with its parts: the credential after a header value's scheme, and for
`Basic` the encoded pair, it decoded and the password. Pure."""

from __future__ import annotations

import base64

from resolver.core.redact import MASK, Redactor


def test_a_header_values_credential_is_masked_alone_too() -> None:
    mask = Redactor(["Bearer trk_live_9f8e7d6c5b4a"])
    assert mask("token trk_live_9f8e7d6c5b4a has expired") == f"token {MASK} has expired"
    assert mask("Authorization: Bearer trk_live_9f8e7d6c5b4a") == f"Authorization: {MASK}"


def test_a_basic_credential_is_masked_encoded_decoded_and_as_its_password() -> None:
    encoded = base64.b64encode(b"ci-bot:s3cret-pass-77").decode()
    mask = Redactor([f"Basic {encoded}"])
    for seen in (encoded, "ci-bot:s3cret-pass-77", "password s3cret-pass-77 refused"):
        assert "s3cret" not in mask(seen) and encoded not in mask(seen), seen


def test_other_values_are_masked_whole_and_short_parts_never() -> None:
    mask = Redactor(["one two three-secret", "Bearer abc"])
    assert mask("one two three-secret") == MASK
    assert mask("three-secret alone") == "three-secret alone"
    assert mask("abc is a word") == "abc is a word"
