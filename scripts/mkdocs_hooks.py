"""MkDocs hooks (mkdocs.yml `hooks:`): each provider's page is its own folder's README.md.

The site's "Providers" section lists `integrations/<name>/README.md` for every folder that has
one, under `providers/<name>.md`, so a new provider brings its page along: nothing is copied
into docs/ and no list names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
SECTION = "Providers"


def provider_pages() -> dict[str, Path]:
    """`providers/<name>.md` → its README, for every provider folder that has one."""
    found = sorted((ROOT / "integrations").glob("*/README.md"))
    return {f"providers/{page.parent.name}.md": page for page in found}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    pages: list[Any] = ["providers/index.md", *provider_pages()]
    for entry in config.nav or []:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = pages
    for page in provider_pages().values():
        config.watch.append(str(page))
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for uri, readme in provider_pages().items():
        files.append(File.generated(config, uri, abs_src_path=str(readme)))
    return files
