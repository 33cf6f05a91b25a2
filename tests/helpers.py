"""Plain helpers the test packages share (fixtures are in tests/conftest.py's plugins)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import structlog
import structlog.testing


def free_port() -> int:
    """A loopback TCP port nothing listens on right now (bound, then closed), for a server
    started later."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def captured_logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """structlog's ``capture_logs`` at every level. A server opened earlier in the process has
    configured structlog for warnings and above (``arena.logging.configure_once``), and
    ``capture_logs`` replaces the processors, not that filter: an info line would be lost."""
    was_configured, config = structlog.is_configured(), structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET))
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        if was_configured:
            structlog.configure(**config)
        else:
            structlog.reset_defaults()
