"""The SDK's log: one JSON object per line on stderr, through the standard library's logging.

A bot's stderr is its log (the arena keeps it, bounded, beside the match's record), and JSON lines
are what the arena's tools read. ``run_bot`` adds the handler only where the program set up no
logging of its own, so an author's set-up wins; ``CARDARENA_LOG_LEVEL`` (default ``warning``)
sets the level. No structlog: the SDK depends on grpcio and protobuf only.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any


class JsonLines(logging.Formatter):
    """``{"event": …, "level": …, "timestamp": …, "logger": …, **fields}``, one line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "event": record.getMessage(),
            "level": record.levelname.lower(),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created)),
            "logger": record.name,
        }
        out.update(getattr(record, "fields", {}))
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class _Stderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (test runners swap it), one write a line
    so threads do not interleave."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def configure(level: str | None = None) -> None:
    """Log JSON lines to stderr at ``level`` (default ``$CARDARENA_LOG_LEVEL``, else
    ``warning``), unless the program set up logging of its own: then this does nothing."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = _Stderr()
    handler.setFormatter(JsonLines())
    root.addHandler(handler)
    name = (level or os.environ.get("CARDARENA_LOG_LEVEL", "") or "warning").upper()
    root.setLevel(name if name in ("DEBUG", "INFO", "WARNING", "ERROR") else "WARNING")


class Logger:
    """Key-value logging on a standard logger: ``log.info("welcomed", session=…)``."""

    __slots__ = ("_logger",)

    def __init__(self, name: str) -> None:
        self._logger = logging.getLogger(name)

    def _log(self, level: int, event: str, fields: dict[str, Any], exc: bool = False) -> None:
        if self._logger.isEnabledFor(level):
            self._logger.log(level, event, exc_info=exc, extra={"fields": fields})

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        """At error level, with the exception being handled."""
        self._log(logging.ERROR, event, fields, exc=True)


def get_logger(name: str) -> Logger:
    """A key-value logger named ``name`` (``cardarena.client``, or a bot's own)."""
    return Logger(name)
