"""Logging for the arena: structlog everywhere, JSON lines when stderr is not a terminal.

Call :func:`configure` once per process (the CLI does); server code just does
``structlog.get_logger("arena.something")`` and logs key-value events.

Code that runs in a bot's process (the SDK, ``arena bot``) logs through the SDK's own
``cardarena.log`` (standard logging, JSON lines) instead: importing structlog imports rich, a
cost at a Python bot's start-up that a tournament pays for every seat of every match
(docs/performance.md has the figures).
"""

from __future__ import annotations

import argparse
import logging as stdlib_logging
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import structlog

LEVELS = ("debug", "info", "warning", "error")
#: ``--log-format``: ``auto`` is console lines on a terminal, JSON lines otherwise.
LOG_FORMATS = ("auto", "console", "json")


def configure(
    level: str = "info",
    json: bool | None = None,
    stream: TextIO | None = None,
) -> None:
    """Set up structlog: ``level`` and above to ``stream`` (stderr), as JSON lines when ``json``
    (default: when the stream is not a terminal), else as readable console lines.
    """
    threshold = _level(level)
    import structlog

    out = stream if stream is not None else sys.stderr
    if json is None:
        json = wants_json("auto", out)
    tail: list[structlog.typing.Processor]
    if json:
        tail = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        # It formats exceptions itself (and warns when format_exc_info ran first): plainly, not
        # as rich's traceback of every frame's locals.
        tail = [
            structlog.dev.ConsoleRenderer(
                colors=out.isatty(),
                pad_event_to=0,
                exception_formatter=structlog.dev.plain_traceback,
            )
        ]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
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
    import structlog

    if not structlog.is_configured():
        configure(level)


def add_log_level_option(parser: argparse.ArgumentParser, default: str, whose: str = "") -> None:
    """``--log-level``, refused in one line by argparse when it is not one of :data:`LEVELS`."""
    parser.add_argument(
        "--log-level",
        default=default,
        choices=LEVELS,
        help=f"{whose + ' ' if whose else ''}log level: {', '.join(LEVELS)} (default {default})",
    )


def wants_json(log_format: str, stream: TextIO) -> bool:
    """Whether ``--log-format`` ``log_format`` renders JSON lines on ``stream``: ``json`` always,
    ``console`` never, ``auto`` unless a person reads it (a terminal)."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}; got {log_format!r}")
    return log_format == "json" or (log_format == "auto" and not stream.isatty())


def add_log_format_option(parser: argparse.ArgumentParser) -> None:
    """``--log-format``: how stderr's log lines look (:func:`wants_json`)."""
    parser.add_argument(
        "--log-format",
        default="auto",
        choices=LOG_FORMATS,
        help="stderr's log lines: console (readable, one per line), json (one object per "
        "line), or auto: console on a terminal, else json (default auto)",
    )


def _level(name: str) -> int:
    if name not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}; got {name!r}")
    value: int = getattr(stdlib_logging, name.upper())
    return value
