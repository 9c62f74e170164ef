"""The text of the notice the ingress records for a sender whose account is not linked."""

from __future__ import annotations

from integrations import registry


def render_unlinked(provider: str, external_id: str, login: str | None) -> str:
    """Tell an unknown sender how to get their account linked."""
    found = registry.find(provider)
    who = f"@{login}" if login and found is not None and found.greets_by_login else "there"
    name = found.display_name if found is not None else provider
    login_option = f" --login {login}" if login else ""
    return (
        f"Hi {who}, I can only work for people whose {name} account is linked to a Resolver "
        f"user, and yours is not linked yet. Ask a Resolver admin to run:\n\n"
        f"    resolver users link <your-user> --provider {provider} "
        f"--external-id {external_id}{login_option}\n\n"
        f"then mention me again."
    )
