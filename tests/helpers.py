"""Plain helpers the test packages share (fixtures are in tests/conftest.py's plugins)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback TCP port nothing listens on right now (bound, then closed), for a server
    started later."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
