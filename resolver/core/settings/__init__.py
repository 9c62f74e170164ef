"""Settings: every knob is a `RESOLVER_*` environment variable or a line in `.env`.

The service's own are `Settings` (service.py), made of its groups of fields by concern
(foundation.py, jobs.py, sandbox.py, agent.py); a provider's are its section, a
`ProviderSettings` (provider.py); loading.py reads them and keeps the process's (`get_settings`)."""

from resolver.core.settings.errors import ConfigError
from resolver.core.settings.foundation import VAR_DIR, admin_id
from resolver.core.settings.loading import (
    HINTS,
    OVERLAY_SECONDS,
    Overlay,
    Sections,
    compose,
    get_settings,
    load_settings,
)
from resolver.core.settings.provider import ProviderSettings, S, web_address
from resolver.core.settings.service import Settings

__all__ = [
    "HINTS",
    "OVERLAY_SECONDS",
    "VAR_DIR",
    "ConfigError",
    "Overlay",
    "ProviderSettings",
    "S",
    "Sections",
    "Settings",
    "admin_id",
    "compose",
    "get_settings",
    "load_settings",
    "web_address",
]
