"""Long-running commands (``arena host``, ``arena serve``) stopped by Ctrl-C or SIGTERM.

Both signals arrive as messages through trio's signal receiver, not as a KeyboardInterrupt
raised wherever the command happens to be (a busy server could hold that off): either is the
same clean cancel at any moment.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable

import trio

#: The signals that stop a command: Ctrl-C, and systemd's, `docker stop`'s or `kill`'s.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def run_until_stopped(command: Callable[[], Awaitable[object]]) -> str:
    """Run ``command`` until it returns or a stop signal arrives; that signal's name
    (``"SIGINT"``, ``"SIGTERM"``), or ``""`` when the command returned by itself."""
    stopped = ""
    # Opened before the command starts, so a signal during its start-up is not lost.
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal stopped
                async for signum in signals:
                    stopped = signal.Signals(signum).name
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(watch)
            await command()
            nursery.cancel_scope.cancel()
    return stopped
