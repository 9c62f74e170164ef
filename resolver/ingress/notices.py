"""The text of the notice the ingress records for a sender whose account is not linked."""

from __future__ import annotations

from integrations import registry
from resolver.core.settings import Settings
from resolver.ingress.links import link_url


def render_unlinked(provider: str, external_id: str, login: str | None, settings: Settings) -> str:
    """Tell an unknown sender how to get their account linked: a forge's people link
    themselves by signing in with it; the others ask an admin."""
    found = registry.find(provider)
    who = f"@{login}" if login and found is not None and found.greets_by_login else "there"
    name = found.display_name if found is not None else provider
    if found is not None and found.sign_in is not None and found.sign_in.client(settings):
        url = link_url(settings, provider, external_id, login)
        hours = f"{settings.link_hours:g}"
        return (
            f"Hi {who}, I work for people who have linked their {name} account to Resolver. "
            f"Link yours by signing in with {name} here (the link works for {hours} hours): "
            f"{url}\n\nOnce it is linked, I will run this request."
        )
    login_option = f" --login {login}" if login else ""
    return (
        f"Hi {who}, I can only work for people whose {name} account is linked to a Resolver "
        f"user, and yours is not linked yet. Ask a Resolver admin to run:\n\n"
        f"    resolver users link <your-user> --provider {provider} "
        f"--external-id {external_id}{login_option}\n\n"
        f"then mention me again."
    )
