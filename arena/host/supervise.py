"""Each part of the host kept running on its own: :func:`supervised`.

The host's parts (the ladder, the validator, the cluster client) share one trio nursery, where an
error in one would cancel the others and stop the host: a bug met by one unusual submission would
take the ladder, the arena and every live bot down with it. Under :func:`supervised` an
unexpected error is logged with its traceback and only its part starts again, after a pause that
doubles while it keeps failing (so a fault that repeats at once does not spin) and is forgotten
once the part has run well for a while. What must still stop the host (the caller's ``fatal``:
the store unusable, say) and cancellation go through unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
import trio

log = structlog.get_logger("arena.host")

#: The first pause before a failed part starts again, seconds; doubled up to the cap.
RESTART_PAUSE_S = 1.0
MAX_RESTART_PAUSE_S = 60.0
#: A part that ran this long before failing starts again after the first pause.
HEALTHY_S = 300.0


class PartStates:
    """Each supervised part's state now, for the host's ``/healthz``: ``running``,
    ``restarting`` (in its pause after a failure) or ``done`` (returned, its work done: the
    cluster client once connected). Read from other threads: a key is only ever set whole."""

    def __init__(self) -> None:
        self._states: dict[str, str] = {}

    def set(self, name: str, state: str) -> None:
        self._states[name] = state

    def states(self) -> dict[str, str]:
        """A copy: part name -> state."""
        return dict(self._states)


class GaveUp(Exception):
    """A supervised part that failed its ``attempts`` times in a row (the last error chained)."""

    def __init__(self, name: str, attempts: int, last: Exception) -> None:
        #: The last error, out of the groups trio wraps a nursery's errors in (the first).
        while isinstance(last, ExceptionGroup) and last.exceptions:
            last = last.exceptions[0]
        super().__init__(f"{name} failed {attempts} times; the last: {type(last).__name__}: {last}")
        self.last = last


def _never(err: BaseException) -> bool:
    return False


def is_fatal(err: BaseException, fatal: Callable[[BaseException], bool]) -> bool:
    """Whether ``err``, or any error in it (trio wraps a nursery's errors in groups), is
    ``fatal``."""
    if isinstance(err, BaseExceptionGroup):
        return any(is_fatal(e, fatal) for e in err.exceptions)
    return fatal(err)


async def supervised(
    name: str,
    part: Callable[[], Awaitable[object]],
    fatal: Callable[[BaseException], bool] = _never,
    *,
    pause_s: float = RESTART_PAUSE_S,
    max_pause_s: float = MAX_RESTART_PAUSE_S,
    healthy_s: float = HEALTHY_S,
    states: PartStates | None = None,
    attempts: int | None = None,
) -> None:
    """Run ``part()`` until it returns; an error that is not ``fatal`` is logged (event "part
    failed; restarting", with ``part=name`` and the traceback) and ``part()`` called again after
    the pause. A fatal error, and anything not an :class:`Exception` (cancellation, Ctrl-C),
    is raised. ``states``, if given, is told where the part is. With ``attempts``, the part's
    ``attempts``-th failure in a row (none counted before a healthy run) raises :class:`GaveUp`
    instead: a part whose work may itself be what fails (one unit's deal)."""
    states = states if states is not None else PartStates()
    pause = pause_s
    failures = 0
    while True:
        began = trio.current_time()
        states.set(name, "running")
        try:
            await part()
            states.set(name, "done")
            return
        except Exception as err:
            if is_fatal(err, fatal):
                raise
            if trio.current_time() - began >= healthy_s:
                pause, failures = pause_s, 0
            failures += 1
            if attempts is not None and failures >= attempts:
                states.set(name, "failed")
                raise GaveUp(name, failures, err) from err
            log.exception("part failed; restarting", part=name, restart_in_s=pause)
            states.set(name, "restarting")
        await trio.sleep(pause)
        pause = min(2 * pause, max_pause_s)
