"""The Grafana dashboard parses, and reads only series Resolver defines (tests/e2e/test_metrics.py
checks them against the real `/metrics` pages after a scripted job)."""

from __future__ import annotations

import json

from prometheus_client import REGISTRY

from resolver.core import metrics
from tests.deploy.grafana import DASHBOARD, dashboard_series, parse, queries, series_in

SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def defined_series() -> set[str]:
    """The sample names of Resolver's own series (`_bucket`, `_count`, `_total`…), labelled
    ones included before they have a sample."""
    assert metrics.LLM_COST is not None  # the module's series are registered
    return {
        family.name + suffix
        for family in REGISTRY.collect()
        if family.name.startswith("resolver_")
        for suffix in SUFFIXES[family.type]
    }


def test_every_panel_has_a_query_that_parses_and_names_a_series() -> None:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    assert {p["title"] for p in panels} >= {
        "👀 latency",
        "Queue age",
        "Jobs by outcome",
        "Model cost per day",
        "Callback failures",
        "Sandboxes running",
        "Reaper removals",
    }
    assert all(panel["targets"] for panel in panels)
    for title, expr in queries():
        assert list(series_in(parse(expr))), title


def test_every_series_the_dashboard_reads_is_one_resolver_defines() -> None:
    unknown = {name: title for name, title in dashboard_series().items()}
    for name in defined_series():
        unknown.pop(name, None)
    assert unknown == {}
