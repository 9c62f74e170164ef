"""A provider's answer read as the shape its reference promises. A field missing, null or of
another kind (a proxy's page served as 200, another API behind the URL) is the provider's
unusable answer: it fails once and the user is told, where a KeyError or a TypeError from deep
in a callback ended it as an internal error, and `str(None)` became an id."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, TypeVar

from resolver.contract.errors import HttpErrors

# What indexing, converting or walking JSON of the wrong shape raises (JSONDecodeError is a
# ValueError, so an answer that is no JSON at all is one of them too).
SHAPE_ERRORS: Final = (KeyError, IndexError, TypeError, ValueError, AttributeError)
T = TypeVar("T")


@contextmanager
def reading(errors: HttpErrors, action: str) -> Iterator[None]:
    """Read the answer to `action` within: a shape error raised there is its unusable answer.
    Only the reading goes inside: a library's own errors are translated before they get here."""
    try:
        yield
    except SHAPE_ERRORS as error:
        raise errors.unusable_answer(action, error) from None


def read(
    errors: HttpErrors, action: str, answer: Callable[[], Any], shape: Callable[[Any], T]
) -> T:
    """The decoded answer (`answer`: a response's `.json`) as `shape` reads it: `fields`,
    `items`, or a client's own reader."""
    with reading(errors, action):
        return shape(answer())


def fields(value: object) -> dict[str, Any]:
    """`value` as a JSON object."""
    if not isinstance(value, dict):
        raise TypeError(f"{type(value).__name__} where an object was due")
    return value


def items(value: object) -> list[dict[str, Any]]:
    """`value` as a JSON array of objects (each a copy)."""
    if not isinstance(value, list):
        raise TypeError(f"{type(value).__name__} where an array was due")
    return [dict(fields(item)) for item in value]


def number(value: object) -> int:
    """`value` as a positive whole number (a numeric id): null, a string, a boolean or a number
    of 0 or less is none."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise TypeError(f"{type(value).__name__} where a positive number was due")
    return value


def text(value: object) -> str:
    """`value` as a string that says something (an id, a login, a URL): null, a number or an
    empty string is none."""
    if not isinstance(value, str) or not value:
        raise TypeError(f"{type(value).__name__} where a string was due")
    return value
