"""Logging for the arena: structlog everywhere, JSON lines when stderr is not a terminal.

Call :func:`configure` once per process (the CLI does); server code just does
``structlog.get_logger("arena.something")`` and logs key-value events.

Code that runs in a bot's process (the SDK, ``arena bot``) logs through :func:`get_logger`
instead, and configures with ``lazy=True``: structlog is then imported only for a record at an
enabled level. Importing structlog imports rich, a cost at a Python bot's start-up that a
tournament pays for every seat of every match (docs/performance.md has the figures); a bot that
logs nothing above its level never imports them.
"""

from __future__ import annotations

import argparse
import logging as stdlib_logging
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import structlog

LEVELS = ("debug", "info", "warning", "error")

#: Records below this level are dropped by :class:`LazyLogger` while structlog is not imported.
_threshold = stdlib_logging.WARNING
#: A configuration waiting for structlog (``configure(..., lazy=True)``): its arguments.
_deferred: tuple[str, bool | None, TextIO | None] | None = None


def configure(
    level: str = "info",
    json: bool | None = None,
    stream: TextIO | None = None,
    *,
    lazy: bool = False,
) -> None:
    """Set up structlog: ``level`` and above to ``stream`` (stderr), as JSON lines when ``json``
    (default: when the stream is not a terminal), else as readable console lines.

    ``lazy``: while structlog is not imported, only remember the setup; the first record of a
    :func:`get_logger` logger at ``level`` or above imports structlog and applies it.
    """
    global _threshold, _deferred
    _threshold = _level(level)
    if lazy and "structlog" not in sys.modules:
        _deferred = (level, json, stream)
        return
    _deferred = None
    import structlog

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


def configure_once(level: str = "warning", *, lazy: bool = False) -> None:
    """Configure with ``level`` unless the process already has (library entry points call this,
    so an embedding program that configured structlog keeps its own setup); ``lazy`` as for
    :func:`configure`. A setup deferred earlier wins over ``level``."""
    if "structlog" in sys.modules:
        import structlog

        if structlog.is_configured():
            return
    elif lazy and _deferred is not None:
        return
    configure(*(_deferred or (level, None, None)), lazy=lazy)


class LazyLogger:
    """A structlog logger that imports structlog at its first record at an enabled level."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def _emit(self, method: str, level: int, event: str, fields: dict[str, Any]) -> None:
        logger = self._logger
        if logger is None:
            if level < _threshold and "structlog" not in sys.modules:
                return
            import structlog

            configure_once()  # the deferred setup, unless structlog was configured meanwhile
            logger = self._logger = structlog.get_logger(self._name)
        getattr(logger, method)(event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        """Log at debug level."""
        self._emit("debug", stdlib_logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        """Log at info level."""
        self._emit("info", stdlib_logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        """Log at warning level."""
        self._emit("warning", stdlib_logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        """Log at error level."""
        self._emit("error", stdlib_logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        """Log at error level with the exception being handled."""
        self._emit("exception", stdlib_logging.ERROR, event, fields)


def get_logger(name: str) -> LazyLogger:
    """A logger for code that runs in bot processes (see the module's docstring)."""
    return LazyLogger(name)


def add_log_level_option(parser: argparse.ArgumentParser, default: str, whose: str = "") -> None:
    """``--log-level``, refused in one line by argparse when it is not one of :data:`LEVELS`."""
    parser.add_argument(
        "--log-level",
        default=default,
        choices=LEVELS,
        help=f"{whose + ' ' if whose else ''}log level: {', '.join(LEVELS)} (default {default})",
    )


def _level(name: str) -> int:
    if name not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}; got {name!r}")
    value: int = getattr(stdlib_logging, name.upper())
    return value
