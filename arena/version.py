"""The arena's version: what Welcome tells every bot, and ``arena --version`` prints."""

from __future__ import annotations

from importlib import metadata


def arena_version() -> str:
    """Version of the installed card-arena package."""
    try:
        return metadata.version("card-arena")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"
