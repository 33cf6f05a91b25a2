"""Errors the arena raises for a user's mistake; the CLI prints them as one line."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of the arena's own errors: a bad config, a missing file, an unreachable server."""


class UsageError(ArenaError):
    """A command-line value is malformed."""
