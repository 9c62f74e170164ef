"""The release this code is: pyproject.toml's version, read from the installed package's
metadata, so it is written in one place."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def current() -> str:
    """This code's semantic version (`0.2.0`, or `0.2.0.dev0` between releases)."""
    try:
        return version("resolver")
    except PackageNotFoundError:  # run from a tree that was never installed
        return "0+unknown"
