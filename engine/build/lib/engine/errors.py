"""Specific errors raised by the engine.

Every error carries a one-line message meant for a user (a tournament host or a bot author):
callers print ``str(err)`` and never a traceback.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class ConfigError(EngineError, ValueError):
    """A match configuration (player count or option) is invalid."""


class UnknownGameError(ConfigError):
    """No game is registered under the requested id."""


class IllegalActionError(EngineError, ValueError):
    """An action was offered that is not among the current legal actions."""

    def __init__(self, seat: int | None, action: str, reason: str) -> None:
        super().__init__(f"illegal action {action!r} for seat {seat}: {reason}")
        #: The seat that tried to act (``None`` when the match is over).
        self.seat = seat
        #: The action's text form as offered.
        self.action = action
        #: Why it was rejected, in words.
        self.reason = reason


class MatchOverError(EngineError):
    """An action was applied to a match that has already ended."""
