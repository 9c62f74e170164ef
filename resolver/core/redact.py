"""Replacing known secret values in text before it is stored or logged. Pure."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable

MASK = "******"
# Shorter values would mask ordinary words; no real token is this short.
MIN_SECRET_LENGTH = 6

# Shapes of well-known credentials, masked even when the job was never told the value.
TOKEN_PATTERNS = re.compile(
    r"(gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{20,}"
    r"|xox[abpors]-[A-Za-z0-9\-]{10,}|sk-[A-Za-z0-9_\-]{20,}|lin_api_[A-Za-z0-9]{20,})"
)


def secret_parts(value: str) -> set[str]:
    """`value` and what of it is a secret on its own: a header value's credential after its
    scheme (`Bearer <token>`, `token <token>`), and for `Basic` the encoded `user:password`,
    it decoded and the password. A server quoting the bare token in an error would otherwise
    show it, the whole header value being all that was masked."""
    parts = {value}
    words = value.split()
    if len(words) == 2:
        scheme, credential = words
        parts.add(credential)
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(credential, validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            parts |= {pair, pair.partition(":")[2]} if ":" in pair else set()
    return parts


class Redactor:
    """Masks a fixed set of secret values (and their parts: `secret_parts`), plus well-known
    token shapes."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {p for s in secrets if s for p in secret_parts(s) if len(p) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is masked whole.
        ordered = sorted(values, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None

    def __call__(self, text: str) -> str:
        if self._pattern is not None:
            text = self._pattern.sub(MASK, text)
        return TOKEN_PATTERNS.sub(MASK, text)

    def __repr__(self) -> str:
        return "Redactor(<hidden>)"

    def redact_value(self, value: object) -> object:
        """Mask secrets inside a JSON-like value (dicts, lists, strings)."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(v) for v in value]
        return value
