"""The competition's HTTP server: hypercorn on trio, kept up whatever a client sends.

Hypercorn's HTTP/2 handler looks a DATA frame's stream up without checking that it is still
open: a client that goes on sending a body after the server has answered (a large POST to a
route that refuses it at once) raises ``KeyError`` out of the connection's task, through
hypercorn's listener and into the host, which then stopped: ladder, arena and live bots with it.
:func:`guard_h2` makes such frames what the protocol says they are, data for a closed stream:
credited to the connection's flow-control window and dropped. Should anything else escape the
server, :func:`serve_http` logs it with its traceback and serves again; the host's other parts
never see it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

import h2.errors
import h2.events
import structlog
import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.events import Closed
from hypercorn.protocol.h2 import H2Protocol

from arena.errors import ArenaError
from arena.host.config import HttpConfig
from arena.host.guard import serve

log = structlog.get_logger("arena.host")

#: Streams a client may reset on one HTTP/2 connection; the connection is closed at the next
#: (each reset stream has had its request started: a flood of them is the "rapid reset" attack,
#: much work for the server for few bytes; hypercorn closes a connection after 1,000 requests
#: anyway, so an honest client that cancels a few never meets it).
MAX_RESETS = 200

#: Seconds between two starts of an HTTP server that failed (so a fault that repeats at once
#: does not spin).
RESTART_PAUSE_S = 1.0

_Handler = Callable[[H2Protocol, list[h2.events.Event]], Coroutine[Any, Any, None]]


def guard_h2() -> None:
    """Drop DATA frames of streams hypercorn has closed, instead of raising (idempotent)."""
    handle: Any = H2Protocol._handle_events
    if getattr(handle, "guarded", False):
        return
    H2Protocol._handle_events = _guarded(handle)  # type: ignore[method-assign,assignment]


def _guarded(handle: _Handler) -> _Handler:
    @functools.wraps(handle)
    async def guarded(self: H2Protocol, events: list[h2.events.Event]) -> None:
        # One event at a time: a stream may close while an earlier event of the batch is
        # handled (the application answers it), so each DATA frame is checked when its turn comes.
        for event in events:
            reset = isinstance(event, h2.events.StreamReset) and event.remote_reset
            if reset and _too_many_resets(self):
                self.connection.close_connection(h2.errors.ErrorCodes.ENHANCE_YOUR_CALM)
                await handle(self, [])  # sends the GOAWAY
                await self.send(Closed())
                return
            if isinstance(event, h2.events.DataReceived) and event.stream_id not in self.streams:
                self.connection.acknowledge_received_data(
                    event.flow_controlled_length, event.stream_id
                )
                continue
            await handle(self, [event])
        await handle(self, [])  # sends what the dropped frames left to send (window updates)

    guarded.guarded = True  # type: ignore[attr-defined]
    return guarded


def _too_many_resets(protocol: H2Protocol) -> bool:
    resets: int = getattr(protocol, "arena_resets", 0) + 1
    protocol.arena_resets = resets  # type: ignore[attr-defined]
    return resets > MAX_RESETS


async def serve_http(
    app: object,
    config: HypercornConfig,
    stop: trio.Event,
    limits: HttpConfig | None = None,
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` until ``stop`` is set, each connection held to ``limits`` (the ``[http]``
    defaults if ``None``; arena/host/guard.py); started with the bound URLs. A failure to
    listen at first is one line (:class:`ArenaError`); a failure once serving is logged with
    its traceback and the server started again on the same addresses."""
    guard_h2()
    limits = limits or HttpConfig()
    status = _Started(task_status)
    while not stop.is_set():
        try:
            await serve(app, config, limits, shutdown_trigger=stop.wait, task_status=status)  # type: ignore[arg-type]
            return
        except Exception as err:
            if not status.done:
                if isinstance(err, OSError):
                    why = err.strerror or str(err)
                    raise ArenaError(f"cannot serve HTTP on {config.bind[0]}: {why}") from None
                raise
            log.exception("the HTTP server failed; serving again", bind=config.bind)
        await trio.sleep(RESTART_PAUSE_S)


class _Started:
    """Passes the first start on (a restart's start is nobody's news) and remembers it."""

    def __init__(self, status: trio.TaskStatus[list[str]]) -> None:
        self._status = status
        self.done = False

    def started(self, value: list[str]) -> None:
        if not self.done:
            self.done = True
            self._status.started(value)
