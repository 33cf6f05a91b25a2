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
import errno
import io
import logging as stdlib_logging
import os
import sys
from collections.abc import MutableMapping
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import structlog

LEVELS = ("debug", "info", "warning", "error")
#: ``--log-format``: ``auto`` is console lines on a terminal, JSON lines otherwise.
LOG_FORMATS = ("auto", "console", "json")
#: A log file (``arena host --log-file``) is rotated at this size, keeping this many old ones.
LOG_FILE_BYTES = 10 * 1024 * 1024
LOG_FILE_BACKUPS = 5


def configure(
    level: str = "info",
    json: bool | None = None,
    stream: TextIO | None = None,
    log_file: stdlib_logging.Handler | None = None,
) -> None:
    """Set up structlog: ``level`` and above to ``stream`` (stderr), as JSON lines when ``json``
    (default: when the stream is not a terminal), else as readable console lines; and, with
    ``log_file`` (:func:`log_file_handler`), the same events as JSON lines to it too.
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
            *([_JsonCopy(log_file)] if log_file is not None else []),
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(file=stream)
        if stream is not None
        else _StderrLoggerFactory(),
        cache_logger_on_first_use=False,
    )


def log_file_handler(
    path: Path, max_bytes: int = LOG_FILE_BYTES, backups: int = LOG_FILE_BACKUPS
) -> RotatingFileHandler:
    """A file of JSON lines at ``path``, rotated at ``max_bytes`` keeping ``backups`` old files
    (``path.1`` the newest). Nothing is made until the first line is written (then its
    directory, owner only): a program refused at its start leaves nothing behind. ``OSError``
    now when it could clearly never be written (a directory there, or a file where a directory
    should be)."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "a directory", str(path))
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{ancestor} is not a directory", str(path))
    handler = _PrivateFileHandler(
        path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True
    )
    handler.setFormatter(stdlib_logging.Formatter("%(message)s"))
    return handler


class _PrivateFileHandler(RotatingFileHandler):
    """Each file (the first, and each one after a rotation) owner only from its first byte, in
    a directory made owner only; a line that cannot be written is one line on stderr."""

    def _open(self) -> io.TextIOWrapper:
        def private(path: str, flags: int) -> int:
            return os.open(path, flags, 0o600)

        Path(self.baseFilename).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        opened = open(  # noqa: SIM115 (the handler closes it)
            self.baseFilename, self.mode, encoding=self.encoding, errors=self.errors, opener=private
        )
        assert isinstance(opened, io.TextIOWrapper)  # a text mode
        return opened

    def handleError(self, record: stdlib_logging.LogRecord) -> None:
        err = sys.exc_info()[1]
        why = (err.strerror if isinstance(err, OSError) else None) or str(err)
        sys.stderr.write(f"arena: cannot write the log file {self.baseFilename}: {why}\n")


class _JsonCopy:
    """A processor: each event also as a JSON line to a handler (a rotating file), whatever
    stderr's lines look like."""

    def __init__(self, handler: stdlib_logging.Handler) -> None:
        import structlog

        self._handler = handler
        self._exc = structlog.processors.format_exc_info
        self._json = structlog.processors.JSONRenderer()

    def __call__(
        self, logger: Any, name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        copy = self._exc(logger, name, dict(event_dict))
        line = self._json(logger, name, copy)
        self._handler.handle(stdlib_logging.makeLogRecord({"msg": line, "args": None}))
        return event_dict


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
