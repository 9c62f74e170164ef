"""`resolver budgets`: spend against each shared cap, in its current UTC day or month."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from resolver.cli.transaction import in_transaction
from resolver.core.budgets import caps_from, label, money
from resolver.core.settings import get_settings
from resolver.store.budgets import overview
from resolver.store.models import utcnow

console = Console()


def budgets() -> None:
    """Show spend (and running jobs' reservations) against each budget cap."""
    caps = caps_from(get_settings())
    if not caps:
        console.print("No budgets are set (RESOLVER_BUDGET_*): jobs are held by per-job limits.")
        return
    table = Table("budget", "for", "spent or reserved", "cap", "used", "resets")
    lines = in_transaction(overview, caps, utcnow())
    for line in lines:
        used = f"{100 * line.spent / line.cap.limit:.0f}%"
        table.add_row(
            label(line.cap),
            line.who,
            money(line.cap.unit, line.spent),
            money(line.cap.unit, line.cap.limit),
            used,
            line.resets_at.strftime("%Y-%m-%d %H:%M UTC"),
        )
    console.print(table)
