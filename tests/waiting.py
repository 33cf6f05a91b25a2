"""Waiting in tests for something to happen, never for a fixed time.

:func:`wait_until` polls a predicate until it is true and returns its (truthy) value; when the
timeout passes first it fails with an ``AssertionError`` that names what was waited for. A
predicate may raise (an ``assert proc.poll() is None, "..."`` inside it, say) to fail at once
when what it waits for can no longer happen. :func:`async_wait_until` is the same for trio code,
:func:`asyncio_wait_until` for asyncio code.

These are the only places in the tests that sleep between two looks: everywhere else a test
waits for the thing itself (a file, a log line, a stored match, a connection), or sleeps because
a bot is slow on purpose.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

import trio

T = TypeVar("T")

#: Seconds between two looks: short next to anything a test waits for, long next to a look.
INTERVAL = 0.02


def _timed_out(what: str, timeout: float) -> AssertionError:
    return AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def wait_until(
    predicate: Callable[[], T], timeout: float, interval: float = INTERVAL, *, what: str
) -> T:
    """Call ``predicate`` every ``interval`` seconds until it returns something true, and
    return that; fail naming ``what`` once ``timeout`` seconds have passed (it gets one last
    look at the deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(what, timeout)
        time.sleep(min(interval, left))


async def async_wait_until(
    predicate: Callable[[], T], timeout: float, interval: float = INTERVAL, *, what: str
) -> T:
    """:func:`wait_until` for trio code: the trio thread goes on running other tasks between
    two looks."""
    deadline = trio.current_time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - trio.current_time()
        if left <= 0:
            raise _timed_out(what, timeout)
        await trio.sleep(min(interval, left))


async def asyncio_wait_until(
    predicate: Callable[[], T], timeout: float, interval: float = INTERVAL, *, what: str
) -> T:
    """:func:`wait_until` for asyncio code (a client running on an asyncio loop of its own)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - loop.time()
        if left <= 0:
            raise _timed_out(what, timeout)
        await asyncio.sleep(min(interval, left))
