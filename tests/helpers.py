"""Plain helpers the test packages share (fixtures are in tests/conftest.py's plugins)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
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


def run_shell(script: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``bash -euc SCRIPT`` in ``cwd``, this interpreter's ``bin`` first on ``PATH`` (``arena`` as
    installed): a docs page's commands, run as written."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-euc", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


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
