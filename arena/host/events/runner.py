"""The host's events part: starts each configured event at its ``start`` (or when the host says
so), and steps every running event on as its rounds end; their units are played by the ladder's
own machinery (:meth:`Ladder.play_unit`), ahead of the ladder's (:attr:`Ladder.events_waiting`).

After a kill -9 the ladder replays every pending unit, event units included, before this part
looks (:attr:`Ladder.resumed`); then the next step is derived from the stored results again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import structlog
import trio

from arena.host.announce import Announcer
from arena.host.config import CompetitionConfig
from arena.host.events.rounds import advance_event, begin_event
from arena.host.ladder import IDLE_POLL_S, Ladder, Wakeup
from arena.host.store import CompetitionStore, Conflict, StoredEvent, StoredMatch

log = structlog.get_logger("arena.host.events")


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class EventRunner:
    """Runs the competition's events beside its ladder."""

    def __init__(
        self,
        store: CompetitionStore,
        config: CompetitionConfig,
        ladder: Ladder,
        clock: Callable[[], dt.datetime] = utc_now,
        announcer: Announcer | None = None,
    ) -> None:
        """``announcer``: where an event's end is announced (by default, in the log only)."""
        self._store, self._config, self._ladder, self._clock = store, config, ladder, clock
        self._announcer = announcer or Announcer(store, config)
        #: Finished events announced by this run (the store keeps each result once, so one
        #: that ended just before a kill -9 is announced after the restart, and only once).
        self._announced: set[str] = set()
        self.wake = Wakeup()
        self._waiting: set[str] = set()
        #: The event units being played (by the ladder's resumption, or started here).
        self._playing: set[int] = set()

    async def run(self) -> None:
        """Forever: start what is due, step what runs, play what a step stored."""
        await self._ladder.resumed.wait()
        self._playing = set(self._ladder.resumed_units)
        async with trio.open_nursery() as nursery:
            while True:
                started = await self._ladder.write(self._step)
                for unit_id, matches in started:
                    nursery.start_soon(self._ladder.play_unit, unit_id, matches)
                await self.wake.wait(IDLE_POLL_S)

    def _step(self) -> list[tuple[int, list[StoredMatch]]]:
        """Start what is due and step what runs; the pending units nobody plays yet (a round
        stored by this step, or an event the host started through the API), with their
        pending matches."""
        store = self._store
        begun = {e.name for e in store.events()}
        for event in self._config.events:
            if event.name in begun or event.start is None or event.start > self._clock():
                continue
            made = begin_event(store, self._config, self._ladder.standings.ladder, event)
            if made is None:
                if event.name not in self._waiting:
                    self._waiting.add(event.name)
                    log.warning("event waits for two versions to enter", name=event.name)
                continue
            log.info("event started", name=event.name, entrants=len(made.entrants))
        todo: list[tuple[int, list[StoredMatch]]] = []
        for stored in store.events():
            if stored.state != "running":
                if stored.name not in self._announced:
                    self._announce(stored)
                continue
            try:
                step = advance_event(store, self._config, stored)
            except Conflict as err:  # an entrant retired under its feet: the event cannot go on
                store.finish_event(stored.id, None, f"stopped: {err}")
                log.warning("event stopped", name=stored.name, reason=str(err))
                continue
            if step.finished:
                self._announce(store.event(stored.name))
            for u in store.event_units(stored.id):
                if u.state == "pending" and u.unit_id not in self._playing:
                    self._playing.add(u.unit_id)
                    matches = [m for m in store.unit_matches(u.unit_id) if m.state == "pending"]
                    todo.append((u.unit_id, matches))
        return todo

    def _announce(self, event: StoredEvent) -> None:
        """Say that ``event`` ended (the log, ``/status``, the webhook), once."""
        if event.winner is None:  # stopped without a winner: no result to announce
            self._announced.add(event.name)
            return
        winner = self._store.version(event.winner).ref
        detail = {"name": event.name, "format": event.format, "reason": event.reason}
        self._announcer.announce("event", event.name, [winner], detail)
        self._announced.add(event.name)
