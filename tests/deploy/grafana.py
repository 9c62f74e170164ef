"""The series the Grafana dashboard (deploy/grafana/resolver.json) reads: every panel's PromQL,
parsed as Prometheus parses it (promql-parser), and each selector's metric name."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "resolver.json"
# Grafana's own variables, given a value as Grafana would before it sends the query.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every target of every panel."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [(panel["title"], target["expr"]) for panel in panels for target in panel["targets"]]


def parse(expr: str) -> Any:
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(name, value)
    assert not re.search(r"\$\w", expr), f"an unknown variable in {expr}"
    return promql_parser.parse(expr)


def series_in(node: Any) -> Iterator[str]:
    """The metric name of every vector selector under `node`."""
    if isinstance(node, promql_parser.VectorSelector):
        yield node.name
        return
    if isinstance(node, promql_parser.MatrixSelector):
        yield from series_in(node.vector_selector)
        return
    for child in ("expr", "lhs", "rhs", "param"):
        if getattr(node, child, None) is not None:
            yield from series_in(getattr(node, child))
    for arg in getattr(node, "args", None) or ():
        yield from series_in(arg)


def dashboard_series() -> dict[str, str]:
    """Each series the dashboard names, with a panel that names it."""
    return {name: title for title, expr in queries() for name in series_in(parse(expr))}
