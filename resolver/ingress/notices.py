"""The text of the notice the ingress records for a sender whose account is not linked."""

from __future__ import annotations

from dataclasses import dataclass

from integrations import registry
from resolver.contract.provider import Provider
from resolver.core.settings import Settings
from resolver.ingress.links import link_url


@dataclass(frozen=True)
class UnlinkedNotice:
    body: str
    """What everyone in the conversation sees."""
    private: str | None = None
    """What only the sender sees (the link, where the provider can post privately)."""
    fallback: str | None = None
    """What everyone sees instead when the private message cannot be sent (the sender is not
    in the channel, say): a public link, which asks them to prove the account is theirs."""


def render_unlinked(
    provider: str, external_id: str, login: str | None, settings: Settings
) -> UnlinkedNotice:
    """Tell an unknown sender how to get their account linked: with a link when people may
    sign in with a forge (privately where the provider can post privately), else by an admin."""
    found = registry.find(provider)
    who = f"@{login}" if login and found is not None and found.greets_by_login else "there"
    name = found.display_name if found is not None else provider
    forges = registry.sign_ins(settings)
    if found is None or not forges or (found.is_forge and found not in forges):
        return UnlinkedNotice(_ask_an_admin(provider, external_id, login, who, name))
    hours = f"{settings.link_hours:g}"
    intro = f"Hi {who}, I work for people who have linked their {name} account to Resolver."
    if found.is_forge:
        url = link_url(settings, provider, external_id, login)
        return UnlinkedNotice(
            f"{intro} Link yours by signing in with {name} here (the link works for {hours} "
            f"hours): {url}\n\nOnce it is linked, I will run this request."
        )
    signing_in = f"signing in with {_either(forges)}"
    if found.post_private is None:
        url = link_url(settings, provider, external_id, login)
        return UnlinkedNotice(
            f"{intro} Link yours by {signing_in} and proving this {name} account is yours, "
            f"here (the link works for {hours} hours): {url}\n\n"
            f"Once it is linked, I will run this request."
        )
    url = link_url(settings, provider, external_id, login, private=True)
    public = link_url(settings, provider, external_id, login)
    return UnlinkedNotice(
        f"{intro} I have sent you a private message with a link to link yours; once it is "
        f"linked, I will run this request.",
        private=f"Link your {name} account to Resolver by {signing_in} here (only you can see "
        f"this link, and it works for {hours} hours): {url}",
        fallback=f"{intro} I could not send you a private message, so link yours by "
        f"{signing_in} and proving this {name} account is yours, here (the link works for "
        f"{hours} hours): {public}\n\nOnce it is linked, I will run this request.",
    )


def _either(forges: tuple[Provider, ...]) -> str:
    return " or ".join(forge.display_name for forge in forges)


def _ask_an_admin(provider: str, external_id: str, login: str | None, who: str, name: str) -> str:
    login_option = f" --login {login}" if login else ""
    return (
        f"Hi {who}, I can only work for people whose {name} account is linked to a Resolver "
        f"user, and yours is not linked yet. Ask a Resolver admin to run:\n\n"
        f"    resolver users link <your-user> --provider {provider} "
        f"--external-id {external_id}{login_option}\n\n"
        f"then mention me again."
    )
