"""Whether a webhook secret is weak: short, made of common words, repeated, sequential, or of
too little entropy. Pure; the verdict names the reason, never the value."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from typing import Final

MIN_LENGTH: Final = 20
# The entropy of the value's own characters, which underestimates a random string: 20 random
# hex digits (80 bits) measure 50 to 70 bits. These bounds pass every generated secret (hex,
# base64, whsec_…) and refuse what a person typed with few distinct characters.
MIN_BITS: Final = 45.0
MIN_BITS_PER_CHAR: Final = 2.4
COMMON_WORDS: Final = frozenset(
    {
        "admin", "changeme", "default", "dev", "development", "example", "gitlab", "github",
        "hook", "jira", "key", "letmein", "linear", "local", "my", "our", "pass", "password",
        "prod", "production", "qwerty", "resolver", "s", "secret", "signing", "slack", "staging",
        "test", "token", "the", "webhook", "welcome",
    }
)  # fmt: skip
_WORDS: Final = re.compile(r"[a-z]+")


def weakness(value: str) -> str | None:
    """Why `value` is a weak secret ("12 characters", "a repeated pattern"), or None."""
    if len(value) < MIN_LENGTH:
        return f"{len(value)} characters"
    if _repeated(value):
        return "a repeated pattern"
    if _sequential(value):
        return "a sequence"
    if _common_words(value):
        return "made of common words"
    if _bits(value) < MIN_BITS or _bits(value) / len(value) < MIN_BITS_PER_CHAR:
        return f"too little entropy (about {_bits(value):.0f} bits)"
    return None


def _repeated(value: str) -> bool:
    """A unit of at most a third of its length, repeated (`abcabcabc…`)."""
    return any(
        value == (value[:size] * (len(value) // size + 1))[: len(value)]
        for size in range(1, len(value) // 3 + 1)
    )


def _sequential(value: str) -> bool:
    """Mostly steps of +1 or -1 between neighbours (`abcdef…`, `987654…`)."""
    steps = [ord(b) - ord(a) for a, b in itertools.pairwise(value)]
    return max(steps.count(1), steps.count(-1)) >= 0.8 * len(steps)


def _common_words(value: str) -> bool:
    """Its letters are only common words, the rest digits and separators."""
    words = _WORDS.findall(value.lower())
    letters = sum(len(word) for word in words)
    return bool(words) and letters >= len(value) / 2 and all(_is_words(w) for w in words)


def _is_words(text: str) -> bool:
    """`text` splits into common words (`mywebhooksecret`)."""
    if not text:
        return True
    return any(text.startswith(w) and _is_words(text[len(w) :]) for w in COMMON_WORDS)


def _bits(value: str) -> float:
    """Shannon entropy of the value's characters, times its length."""
    counts, total = Counter(value), len(value)
    per_char = -sum(n / total * math.log2(n / total) for n in counts.values())
    return per_char * total
