"""A Prometheus text page read as its samples, for the tests and benches that scrape `/metrics`."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

Sample = tuple[str, tuple[tuple[str, str], ...]]
"""A sample's name and its labels, sorted:
`("resolver_intake_seconds_sum", (("stage", "record"),))`."""


def samples(text: str) -> dict[Sample, float]:
    """Every sample of a Prometheus page, by name and labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found
