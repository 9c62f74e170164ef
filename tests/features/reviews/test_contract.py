"""The `reviews` settings of `.resolver/config.yml`. Pure."""

from __future__ import annotations

from typing import Any

import pytest

from resolver.features.reviews.contract import (
    ReviewsConfig,
    ReviewsConfigError,
    parse_reviews_config,
)


def test_threads_are_left_open_unless_the_repository_allows_resolving() -> None:
    assert parse_reviews_config({}) == ReviewsConfig(resolve_threads=False)
    assert parse_reviews_config({"reviews": None}).resolve_threads is False
    assert parse_reviews_config({"reviews": {}}).resolve_threads is False
    assert parse_reviews_config({"reviews": {"resolve_threads": False}}).resolve_threads is False
    assert parse_reviews_config({"reviews": {"resolve_threads": True}}).resolve_threads is True
    assert parse_reviews_config({"ci": {"fix": True}}) == ReviewsConfig()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("yes", "`reviews` must be a mapping"),
        (["resolve_threads"], "`reviews` must be a mapping"),
        ({"resolve_threads": "yes"}, "`reviews.resolve_threads` must be true or false"),
        ({"resolve_threads": 1}, "`reviews.resolve_threads` must be true or false"),
        ({"resolve": True}, "`reviews` has unknown keys: resolve"),
    ],
)
def test_a_bad_reviews_setting_says_what_is_wrong(value: Any, says: str) -> None:
    with pytest.raises(ReviewsConfigError) as caught:
        parse_reviews_config({"reviews": value})
    assert says in str(caught.value)
