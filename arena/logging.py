"""Logging for the arena: structlog everywhere, JSON lines when stderr is not a terminal.

Call :func:`configure` once per process (the CLI does); library code just does
``structlog.get_logger("arena.something")`` and logs key-value events.
"""

from __future__ import annotations

import logging as stdlib_logging
import sys
from typing import TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error")


def configure(level: str = "info", json: bool | None = None, stream: TextIO | None = None) -> None:
    """Set up structlog: ``level`` and above to ``stream`` (stderr), as JSON lines when ``json``
    (default: when the stream is not a terminal), else as readable console lines."""
    out = stream if stream is not None else sys.stderr
    if json is None:
        json = not out.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_level(level)),
        logger_factory=structlog.PrintLoggerFactory(file=stream)
        if stream is not None
        else _StderrLoggerFactory(),
        cache_logger_on_first_use=False,
    )


class _StderrLogger:
    """Writes each line to whatever ``sys.stderr`` is at the time (test runners swap it)."""

    def msg(self, message: str) -> None:
        sys.stderr.write(message + "\n")  # one write per line: threads do not interleave
        sys.stderr.flush()

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


class _StderrLoggerFactory:
    def __call__(self, *args: object) -> _StderrLogger:
        return _StderrLogger()


def configure_once(level: str = "warning") -> None:
    """Configure with ``level`` unless the process already has (library entry points call this,
    so an embedding program that configured structlog keeps its own setup)."""
    if not structlog.is_configured():
        configure(level)


def _level(name: str) -> int:
    if name not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}; got {name!r}")
    value: int = getattr(stdlib_logging, name.upper())
    return value
