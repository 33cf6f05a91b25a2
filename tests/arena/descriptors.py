"""Test helpers for the server's descriptor limits (arena/server/limits.py): a process's soft
open-files limit set for a while, and raw connections that hold a server descriptor."""

from __future__ import annotations

import resource
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

#: The soft open-files limit most machines give a process (systemd's default).
USUAL_SOFT = 1024
#: What a gRPC client sends first: the HTTP/2 preface and an empty SETTINGS frame.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def hard_open_files() -> int:
    """This process's hard RLIMIT_NOFILE, failing the test when it is too low for these tests
    (an attack of a few thousand connections must fit under it)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 8 * USUAL_SOFT:
        pytest.fail(f"these tests need a hard open-files limit of at least {8 * USUAL_SOFT}")
    return hard


@contextmanager
def soft_open_files(limit: int) -> Iterator[None]:
    """This process's soft RLIMIT_NOFILE set to ``limit``, restored afterwards (a server
    started meanwhile may raise it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed the blocking-mode ``sock`` (what it sent meanwhile is
    read and dropped)."""
    try:
        while True:
            if sock.recv(65536, socket.MSG_DONTWAIT) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
