"""What the typed values stored as JSON share: how one that does not read is described. Pure."""

from __future__ import annotations

from pydantic import ValidationError


def faults_of(error: ValidationError, limit: int = 5) -> str:
    """Where and what is wrong, without the values (pydantic's own message quotes them, and a
    stored value may hold a person's words or a link that signs someone in)."""
    faults = error.errors(include_url=False, include_input=False, include_context=False)
    return "; ".join(
        f"{'.'.join(str(part) for part in fault['loc']) or 'value'}: {fault['msg']}"
        for fault in faults[:limit]
    )
