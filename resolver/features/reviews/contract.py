"""A review batch's repository settings. Pure.

`.resolver/config.yml` on the default branch lets the bot resolve the threads it addressed:

    reviews:
      resolve_threads: true   # off unless set
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

REVIEWS_KEY: Final = "reviews"
RESOLVE_KEY: Final = "resolve_threads"
"""A job result key: the repository allows resolving the threads the job took."""


class ReviewsConfigError(ValueError):
    """`reviews` in `.resolver/config.yml` is not what the README describes."""


@dataclass(frozen=True)
class ReviewsConfig:
    resolve_threads: bool = False


def parse_reviews_config(repo_config: Mapping[str, object]) -> ReviewsConfig:
    """The repository's `reviews` settings (off when absent), or ReviewsConfigError saying
    what is wrong."""
    value = repo_config.get(REVIEWS_KEY)
    if value is None:
        return ReviewsConfig()
    if not isinstance(value, Mapping):
        raise ReviewsConfigError(
            "`reviews` must be a mapping, like `reviews: {resolve_threads: true}`"
        )
    unknown = sorted(str(key) for key in value if key != RESOLVE_KEY)
    if unknown:
        raise ReviewsConfigError(f"`reviews` has unknown keys: {', '.join(unknown)}")
    resolve = value.get(RESOLVE_KEY, False)
    if not isinstance(resolve, bool):
        raise ReviewsConfigError("`reviews.resolve_threads` must be true or false")
    return ReviewsConfig(resolve_threads=resolve)
